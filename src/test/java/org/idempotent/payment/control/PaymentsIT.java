package org.idempotent.payment.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.idempotent.Resources;
import org.idempotent.delivery.control.EventProcessor;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.stack.Build;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The service inside the container, called directly: the transaction and dedup decisions without the broker. */
@ExtendWith(ArquillianExtension.class)
class PaymentsIT {

    private static final int THREADS = 8;

    @Deployment
    static WebArchive deployment() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, Build.WAR.toFile());
    }

    @Inject
    EventProcessor processor;

    @Inject
    Payments payments;

    @Resource(lookup = Resources.DATA_SOURCE)
    DataSource dataSource;

    @Resource
    ManagedThreadFactory threads;

    /** The seed's test, made stronger: 8 threads released together by a barrier, 50 times over, one account. */
    @Test
    void sameEventFromManyThreadsAtTheSameInstantIsAppliedOnce() throws Exception {
        String account = account();
        int rounds = 50;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS, threads);
        try {
            for (int round = 0; round < rounds; round++) {
                PaymentEvent event = new PaymentEvent(UUID.randomUUID(), account, 100);
                CyclicBarrier start = new CyclicBarrier(THREADS);
                List<Future<Outcome>> calls = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    calls.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        return processor.apply(event, payments);
                    }));
                }
                Map<Outcome, Integer> outcomes = new EnumMap<>(Outcome.class);
                for (Future<Outcome> call : calls) {
                    outcomes.merge(call.get(60, TimeUnit.SECONDS), 1, Integer::sum);
                }
                assertEquals(Map.of(Outcome.APPLIED, 1, Outcome.DUPLICATE, THREADS - 1), outcomes, "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(rounds * 100L, balance(account));
    }

    @Test
    void firstPaymentCreatesTheAccountAndASecondDeliveryIsADuplicate() throws SQLException {
        String account = account();
        PaymentEvent event = new PaymentEvent(UUID.randomUUID(), account, 250);
        assertNull(balance(account));

        assertEquals(Outcome.APPLIED, processor.apply(event, payments));
        assertEquals(Outcome.DUPLICATE, processor.apply(event, payments));

        assertEquals(250L, balance(account));
        assertEquals(1L, processedRows(event.eventId()));
    }

    @Test
    void guardRefusesAReplayOfTheLastAppliedEventWhoseDedupRecordIsGone() throws SQLException {
        String account = account();
        PaymentEvent event = new PaymentEvent(UUID.randomUUID(), account, 300);
        assertEquals(Outcome.APPLIED, processor.apply(event, payments));
        // A backfill or a manual clean-up that bypassed dedup.
        execute("DELETE FROM processed_events WHERE event_id = ?", event.eventId());

        Outcome replay = processor.apply(event, payments);

        assertEquals(Outcome.ALREADY_APPLIED, replay);
        assertEquals(300L, balance(account));
        assertEquals(1L, processedRows(event.eventId()), "the dedup record is written again");
    }

    @Test
    void differentEventsForOneAccountAddUp() throws SQLException {
        String account = account();

        for (long amount = 1; amount <= 5; amount++) {
            assertEquals(
                    Outcome.APPLIED, processor.apply(new PaymentEvent(UUID.randomUUID(), account, amount), payments));
        }

        assertEquals(15L, balance(account));
    }

    private Long balance(String account) throws SQLException {
        return query("SELECT balance_cents FROM accounts WHERE id = ?", account);
    }

    private long processedRows(UUID eventId) throws SQLException {
        return query("SELECT count(*) FROM processed_events WHERE event_id = ?", eventId);
    }

    private Long query(String sql, Object parameter) throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement query = db.prepareStatement(sql)) {
            query.setObject(1, parameter);
            try (ResultSet row = query.executeQuery()) {
                return row.next() ? row.getLong(1) : null;
            }
        }
    }

    private void execute(String sql, Object parameter) throws SQLException {
        try (Connection db = dataSource.getConnection();
                PreparedStatement statement = db.prepareStatement(sql)) {
            statement.setObject(1, parameter);
            statement.executeUpdate();
        }
    }

    private static String account() {
        return "svc-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
