package org.idempotent.delivery.control;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.persistence.logging.DefaultSessionLog;
import org.eclipse.persistence.logging.SessionLog;
import org.eclipse.persistence.logging.SessionLogEntry;

/**
 * EclipseLink's log into java.util.logging (the server log), less the stack trace it writes for every violation of the
 * dedup key before the application sees the exception. That violation is how a duplicate delivery shows itself:
 * {@link EventProcessor} counts it and the consumer logs it in one line. Everything else is logged, under
 * {@code org.eclipse.persistence.<category>}, when both EclipseLink's level for its category and the server's level for
 * that logger let it through.
 *
 * <p>It extends the one log class every EclipseLink of the Payara 7 line has under the same name: the JUL log itself
 * moved between them ({@code logging.JavaLog} in Payara Server 7.2025.1's EclipseLink 5.0.0-B08,
 * {@code logging.jul.JavaLog} in Payara Micro 7.2026.11's 5.0.1), and a subclass of either fails the other's deployment
 * with NoClassDefFoundError.
 */
public class DuplicateQuietLog extends DefaultSessionLog {

    private static final String NAMESPACE = "org.eclipse.persistence";

    @Override
    public boolean shouldLog(int level, String category) {
        return super.shouldLog(level, category) && logger(category).isLoggable(julLevel(level));
    }

    @Override
    public void log(SessionLogEntry entry) {
        if (entry.hasException() && DatabaseFailure.of(entry.getException()).isDedupKey()) {
            return;
        }
        if (!shouldLog(entry.getLevel(), entry.getNameSpace())) {
            return;
        }
        String message = entry.hasMessage() ? formatMessage(entry) : "";
        logger(entry.getNameSpace()).log(julLevel(entry.getLevel()), message, entry.getException());
    }

    private static Logger logger(String category) {
        return Logger.getLogger(category == null || category.isEmpty() ? NAMESPACE : NAMESPACE + "." + category);
    }

    static Level julLevel(int level) {
        return switch (level) {
            case SessionLog.SEVERE -> Level.SEVERE;
            case SessionLog.WARNING -> Level.WARNING;
            case SessionLog.INFO -> Level.INFO;
            case SessionLog.CONFIG -> Level.CONFIG;
            case SessionLog.FINE -> Level.FINE;
            case SessionLog.FINER -> Level.FINER;
            case SessionLog.FINEST, SessionLog.ALL -> Level.FINEST;
            default -> Level.OFF;
        };
    }
}
