package org.idempotent.loadgen;

import jakarta.jms.JMSException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * The two ways events reach a consumer that is left running: at full speed (a backlog, many events per relay pass and
 * per transaction of the pool) and one by one (a quiet hour: every event its own delivery, commit and relay pass).
 * Each returns once every distinct event of the set is applied and every account's balance is what was sent.
 */
public final class Regimes {

    private static final int FULL_SPEED_PRODUCERS = 4;
    private static final int FULL_SPEED_BATCH = 100;

    private Regimes() {}

    /** The set as producers send a backlog: transacted batches from several threads at once. */
    public static void fullSpeed(Settings settings, MessageSet messages, Duration timeout) {
        Traffic.start(settings, messages.items(), FULL_SPEED_PRODUCERS, FULL_SPEED_BATCH)
                .await();
        awaitExact(settings, messages, timeout);
    }

    /** The set one message at a time, {@code perSecond} of them a second, each committed to the broker alone. */
    public static void oneByOne(Settings settings, MessageSet messages, double perSecond, Duration timeout) {
        long interval = Math.round(1e9 / perSecond);
        long next = System.nanoTime();
        try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), false)) {
            for (MessageSet.Item item : messages.items()) {
                // A pace, not a wait for an outcome: the producer of a quiet hour.
                LockSupport.parkNanos(next - System.nanoTime());
                next += interval;
                Traffic.send(settings, producer, item);
            }
        } catch (JMSException e) {
            throw new IllegalStateException("sending one by one failed", e);
        }
        awaitExact(settings, messages, timeout);
    }

    /** Waits until every distinct event is applied, then checks every account's balance. */
    public static void awaitExact(Settings settings, MessageSet messages, Duration timeout) {
        int distinct = messages.distinct().size();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Connection db = Database.connect(settings)) {
            Array ids = db.createArrayOf("uuid", messages.distinctIds().toArray());
            long applied;
            while ((applied = countApplied(db, ids)) < distinct) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "only " + applied + " of " + distinct + " distinct events applied within " + timeout);
                }
                LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
            }
            Map<String, Long> expected = messages.expectedBalances();
            Map<String, Long> actual = balances(db, expected);
            if (!actual.equals(expected)) {
                throw new IllegalStateException("balances differ from what was sent: " + differences(expected, actual));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("checking the applied events failed", e);
        }
    }

    /** How many of {@code ids} (an array of uuid) have a dedup record. */
    public static long countApplied(Connection db, Array ids) throws SQLException {
        try (PreparedStatement query =
                db.prepareStatement("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)")) {
            query.setArray(1, ids);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    /** The balances of the accounts {@code pattern} (SQL LIKE) matches. */
    public static Map<String, Long> balances(Connection db, String pattern) throws SQLException {
        try (PreparedStatement query = db.prepareStatement("SELECT id, balance_cents FROM accounts WHERE id LIKE ?")) {
            query.setString(1, pattern);
            return balances(query);
        }
    }

    private static Map<String, Long> balances(Connection db, Map<String, Long> accounts) throws SQLException {
        try (PreparedStatement query =
                db.prepareStatement("SELECT id, balance_cents FROM accounts WHERE id = ANY (?)")) {
            query.setArray(1, db.createArrayOf("text", accounts.keySet().toArray()));
            return balances(query);
        }
    }

    private static Map<String, Long> balances(PreparedStatement query) throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        try (ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                balances.put(rows.getString(1), rows.getLong(2));
            }
        }
        return balances;
    }

    private static String differences(Map<String, Long> expected, Map<String, Long> actual) {
        StringBuilder differences = new StringBuilder();
        expected.forEach((account, balance) -> {
            if (!balance.equals(actual.get(account)) && differences.length() < 500) {
                differences
                        .append(account)
                        .append(": sent ")
                        .append(balance)
                        .append(", balance ")
                        .append(actual.get(account))
                        .append("; ");
            }
        });
        return differences.toString();
    }
}
