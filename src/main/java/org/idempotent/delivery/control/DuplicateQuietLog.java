package org.idempotent.delivery.control;

import org.eclipse.persistence.logging.SessionLogEntry;
import org.eclipse.persistence.logging.jul.JavaLog;

/**
 * EclipseLink's log, less the stack trace it writes for every violation of the dedup key before the application sees
 * the exception. That violation is how a duplicate delivery shows itself: {@link EventProcessor} counts it and the
 * consumer logs it in one line. Everything else is logged as before.
 */
public class DuplicateQuietLog extends JavaLog {

    @Override
    public void log(SessionLogEntry entry) {
        if (entry.hasException() && DatabaseFailure.of(entry.getException()).isDedupKey()) {
            return;
        }
        super.log(entry);
    }
}
