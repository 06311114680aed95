package org.idempotent.delivery.control;

import static java.util.Objects.requireNonNull;

import java.sql.SQLException;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.Rejection;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * A failure of an event's transaction, sorted by the SQLState PostgreSQL gave it, never by the exception type a
 * library wraps it in (src/site/markdown/failures.md):
 *
 * <ul>
 *   <li>the dedup key ({@link ProcessedEvent#DEDUP_KEY}, recognised by its constraint name, not by 23505 alone: a
 *       unique violation on any other key counted as a duplicate would be rolled back and acknowledged, i.e. lost);
 *   <li>permanent: class 22 (data exception, e.g. 22003 a balance past the bigint range) and class 23 (integrity
 *       violation) on any other constraint. The same statement fails the same way on every redelivery;
 *   <li>transient: classes 08 (connection), 53 (insufficient resources), 57 (operator intervention, e.g. a shutdown),
 *       40 (serialization failure, deadlock), 25006 (a read-only standby answered) and 25P03 (the server ended a
 *       session left idle mid-transaction, as a paused JVM leaves it): the database may take the same statement
 *       later;
 *   <li>unclassified: everything else, including a failure with no SQLState at all. Treated as transient (retrying is
 *       what cannot lose a payment), but counted apart, so that a dashboard shows what the rules do not know.
 * </ul>
 */
public record DatabaseFailure(Kind kind, String sqlState, String constraint, String message) {

    public enum Kind {
        DEDUP_KEY,
        PERMANENT,
        TRANSIENT,
        UNCLASSIFIED
    }

    static final String NUMERIC_VALUE_OUT_OF_RANGE = "22003";
    static final String READ_ONLY_TRANSACTION = "25006";
    static final String IDLE_IN_TRANSACTION_TIMEOUT = "25P03";

    public DatabaseFailure {
        requireNonNull(kind, "kind");
    }

    public static DatabaseFailure of(Throwable failure) {
        SQLException sql = sqlCause(failure);
        if (sql == null) {
            return new DatabaseFailure(Kind.UNCLASSIFIED, null, null, rootCause(failure));
        }
        String state = sql.getSQLState();
        String constraint = constraint(sql);
        return new DatabaseFailure(kindOf(state, constraint), state, constraint, sql.getMessage());
    }

    private static Kind kindOf(String state, String constraint) {
        if (state == null || state.length() != 5) {
            return Kind.UNCLASSIFIED;
        }
        String stateClass = state.substring(0, 2);
        if (stateClass.equals("23") && ProcessedEvent.isDedupKey(constraint)) {
            return Kind.DEDUP_KEY;
        }
        return switch (stateClass) {
            case "22", "23" -> Kind.PERMANENT;
            case "08", "53", "57", "40" -> Kind.TRANSIENT;
            default ->
                state.equals(READ_ONLY_TRANSACTION) || state.equals(IDLE_IN_TRANSACTION_TIMEOUT)
                        ? Kind.TRANSIENT
                        : Kind.UNCLASSIFIED;
        };
    }

    public boolean isDedupKey() {
        return kind == Kind.DEDUP_KEY;
    }

    /** The reason a permanent failure is dead-lettered with. */
    public Rejection rejection() {
        if (kind != Kind.PERMANENT) {
            throw new IllegalStateException("only a permanent failure is a rejection, not " + kind);
        }
        String detail = "the database refused the event (SQLState " + sqlState
                + (constraint == null ? "" : ", constraint " + constraint) + "): " + message;
        if (NUMERIC_VALUE_OUT_OF_RANGE.equals(sqlState)) {
            return new Rejection(Rejection.Reason.AMOUNT_OUT_OF_RANGE, detail);
        }
        return new Rejection(Rejection.Reason.REFUSED_BY_DATABASE, detail);
    }

    private static SQLException sqlCause(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql) {
                // A batch or pool may wrap the server's error in a SQLException of its own without a state.
                return sql.getSQLState() == null && sql.getNextException() != null ? sql.getNextException() : sql;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    private static String constraint(SQLException sql) {
        if (sql instanceof PSQLException psql) {
            ServerErrorMessage server = psql.getServerErrorMessage();
            return server == null ? null : server.getConstraint();
        }
        return null;
    }

    /** The innermost cause, by class and message: what a log line needs of a failure. */
    public static String rootCause(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }
}
