package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.eclipse.persistence.logging.SessionLog;
import org.eclipse.persistence.logging.SessionLogEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

class DuplicateQuietLogTest {

    private final Logger sql = Logger.getLogger("org.eclipse.persistence.sql");
    private final List<LogRecord> records = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final DuplicateQuietLog log = new DuplicateQuietLog();

    @BeforeEach
    void capture() {
        sql.addHandler(capture);
        sql.setUseParentHandlers(false);
        sql.setLevel(Level.ALL);
        log.setLevel(SessionLog.INFO);
    }

    @AfterEach
    void release() {
        sql.removeHandler(capture);
        sql.setUseParentHandlers(true);
        sql.setLevel(null);
    }

    @Test
    void aViolationOfTheDedupKeyIsNotLogged() {
        log.log(entry(SessionLog.WARNING, serverError("23505", "processed_events_pkey")));

        assertThat(records).isEmpty();
    }

    @Test
    void everyOtherFailureReachesTheServerLogWithItsException() {
        PSQLException other = serverError("23505", "accounts_pkey");

        log.log(entry(SessionLog.WARNING, other));

        assertThat(records).singleElement().satisfies(record -> {
            assertThat(record.getLevel()).isEqualTo(Level.WARNING);
            assertThat(record.getThrown()).isSameAs(other);
        });
    }

    @Test
    void eclipseLinksLevelForTheCategoryStillHoldsBack() {
        log.setLevel(SessionLog.OFF, SessionLog.SQL);

        log.log(entry(SessionLog.WARNING, serverError("23505", "accounts_pkey")));

        assertThat(records).isEmpty();
    }

    private static SessionLogEntry entry(int level, Exception exception) {
        SessionLogEntry entry = new SessionLogEntry(level, SessionLog.SQL, null, null, exception);
        entry.setLevel(level);
        entry.setNameSpace(SessionLog.SQL);
        entry.setMessage(null);
        entry.setException(exception);
        return entry;
    }

    private static PSQLException serverError(String state, String constraint) {
        return new PSQLException(
                new ServerErrorMessage("SERROR\0C" + state + "\0Mduplicate key value\0n" + constraint + "\0"));
    }
}
