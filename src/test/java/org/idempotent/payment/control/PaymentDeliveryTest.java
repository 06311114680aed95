package org.idempotent.payment.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.NotificationOptions;
import jakarta.enterprise.util.TypeLiteral;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import jakarta.persistence.PersistenceException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentApplied;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.ProcessedEvent;
import org.idempotent.payment.entity.RejectedMessage;
import org.idempotent.payment.entity.Rejection;
import org.idempotent.retention.control.RetentionSettings;
import org.junit.jupiter.api.Test;

/**
 * The decisions of one delivery, with fakes at its edges: the database (what {@code apply} answers, the record a
 * duplicate finds, a release), the dead-letter queues, the announcement event and the breaker. The horizon is the real
 * one, over a 14-day window (13 days).
 */
class PaymentDeliveryTest {

    private static final UUID ID = UUID.fromString("0b5a0a6e-9d7e-4c31-8a4e-3f6a1f0c2b11");
    private static final PaymentEvent EVENT = new PaymentEvent(ID, "acc-1", 500);

    private final FakeDatabase database = new FakeDatabase();
    private final List<DeliveryResult.MovedAside> movedAside = new ArrayList<>();
    private final List<PaymentApplied> announced = new ArrayList<>();
    private final List<Outcome> counted = new ArrayList<>();
    private final List<RuntimeException> breakerSaw = new ArrayList<>();
    private final PaymentDelivery delivery = new PaymentDelivery();

    PaymentDeliveryTest() {
        delivery.processor = database;
        delivery.horizon = new DedupHorizon();
        delivery.horizon.retention = new RetentionSettings() {
            @Override
            public Duration window() {
                return Duration.ofDays(14);
            }
        };
        delivery.breaker = new DatabaseBreaker() {
            @Override
            public void awaitClosed() {}

            @Override
            public RuntimeException failed(RuntimeException e) {
                breakerSaw.add(e);
                return e instanceof PersistenceException && "refused".equals(e.getMessage())
                        ? new RejectedMessage(Rejection.Reason.REFUSED_BY_DATABASE, "23514 check_violation")
                        : e;
            }
        };
        delivery.metrics = new PaymentMetrics() {
            @Override
            public long started() {
                return 0;
            }

            @Override
            public void finished(long started, Outcome outcome) {
                counted.add(outcome);
            }

            @Override
            public void duplicateArrived(Duration age) {}
        };
        delivery.deadLetters = new DeadLetters() {
            @Override
            public void moveAside(Message message, DeliveryResult.MovedAside aside) {
                movedAside.add(aside);
            }
        };
        delivery.applied = new Announcements(announced);
    }

    @Test
    void aPaymentAppliedIsAnnouncedAfterItsCommitAndCounted() {
        database.answer = Outcome.APPLIED;

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(database.applied).containsExactly(EVENT);
        assertThat(announced).containsExactly(new PaymentApplied(ID, "acc-1"));
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.APPLIED);
    }

    @Test
    void aDuplicateOfTheSamePaymentIsAcknowledgedWithoutEffectOrAnnouncement() {
        database.answer = Outcome.DUPLICATE;
        database.record = recorded(EVENT, Instant.now().minusSeconds(60));

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(announced).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void aDuplicateWhoseRecordWasPurgedMeanwhileIsStillADuplicate() {
        database.answer = Outcome.DUPLICATE;

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void anIdReusedForAnotherPaymentIsMovedAsideAsAConflictWithBothFingerprints() {
        database.answer = Outcome.DUPLICATE;
        database.record =
                recorded(new PaymentEvent(ID, "acc-1", 900), Instant.now().minusSeconds(60));

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(movedAside).singleElement().satisfies(aside -> {
            assertThat(aside.outcome()).isEqualTo(Outcome.CONFLICT);
            assertThat(aside.evidence())
                    .containsKeys(MessageProperties.ORIGINAL_FINGERPRINT, MessageProperties.FINGERPRINT)
                    .containsEntry(MessageProperties.EVENT_ID, ID.toString());
        });
        assertThat(announced).isEmpty();
        assertThat(counted).containsExactly(Outcome.CONFLICT);
    }

    @Test
    void aPaymentTheAccountAlreadyShowsIsNeitherAppliedAgainNorAnnounced() {
        database.answer = Outcome.ALREADY_APPLIED;

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(announced).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.ALREADY_APPLIED);
    }

    @Test
    void anInvalidMessageIsDeadLetteredWithItsReasonAndNeverReachesTheDatabase() {
        delivery.receive(text("{\"eventId\":\"" + ID + "\",\"accountId\":\"acc-1\"}", Instant.now()));

        assertThat(database.applied).isEmpty();
        assertThat(movedAside).singleElement().satisfies(aside -> {
            assertThat(aside.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(aside.rejection().reason()).isEqualTo(Rejection.Reason.MISSING_FIELD);
        });
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    @Test
    void aStaleEventWithoutARecordIsQuarantinedUnapplied() {
        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(13)).minusSeconds(60)));

        assertThat(database.applied).isEmpty();
        assertThat(movedAside).singleElement().satisfies(aside -> {
            assertThat(aside.outcome()).isEqualTo(Outcome.QUARANTINED);
            assertThat(aside.rejection().reason()).isEqualTo(Rejection.Reason.STALE);
        });
        assertThat(announced).isEmpty();
    }

    @Test
    void aStaleEventStillRecordedIsADuplicateAndNeverApplied() {
        database.record = recorded(EVENT, Instant.now().minus(Duration.ofDays(13)));

        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(13)).minusSeconds(60)));

        assertThat(database.applied).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void aStaleEventAnAdministratorReleasedIsApplied() {
        database.released = true;
        database.answer = Outcome.APPLIED;

        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(20))));

        assertThat(database.applied).containsExactly(EVENT);
        assertThat(movedAside).isEmpty();
        assertThat(announced).hasSize(1);
    }

    @Test
    void aTransientFailureGoesToTheBreakerAndBackToTheBrokerWithNothingMovedOrAnnounced() {
        database.failure = new PersistenceException("connection reset");

        assertThatThrownBy(() -> delivery.receive(message(EVENT, Instant.now())))
                .isSameAs(database.failure);

        assertThat(breakerSaw).containsExactly(database.failure);
        assertThat(movedAside).isEmpty();
        assertThat(announced).isEmpty();
        assertThat(counted).containsExactly(Outcome.FAILED);
    }

    @Test
    void aPaymentTheDatabaseRefusesForGoodIsDeadLetteredNotRedelivered() {
        database.failure = new PersistenceException("refused");

        delivery.receive(message(EVENT, Instant.now()));

        assertThat(movedAside)
                .singleElement()
                .satisfies(aside ->
                        assertThat(aside.rejection().reason()).isEqualTo(Rejection.Reason.REFUSED_BY_DATABASE));
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    /** The database as the delivery sees it through PaymentProcessor. */
    static final class FakeDatabase extends PaymentProcessor {
        Outcome answer;
        RuntimeException failure;
        ProcessedEvent record;
        boolean released;
        final List<PaymentEvent> applied = new ArrayList<>();

        @Override
        public Outcome apply(PaymentEvent event) {
            if (failure != null) {
                throw failure;
            }
            applied.add(event);
            return answer;
        }

        @Override
        public Optional<ProcessedEvent> recordOf(UUID eventId) {
            return Optional.ofNullable(record).filter(r -> r.eventId().equals(eventId));
        }

        @Override
        public boolean releasedSince(UUID eventId, Instant since) {
            return released;
        }
    }

    /** The CDI event the relay observes: fired only after a commit that applied a payment. */
    record Announcements(List<PaymentApplied> fired) implements Event<PaymentApplied> {

        @Override
        public void fire(PaymentApplied event) {
            fired.add(event);
        }

        @Override
        public <U extends PaymentApplied> CompletionStage<U> fireAsync(U event) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends PaymentApplied> CompletionStage<U> fireAsync(U event, NotificationOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Event<PaymentApplied> select(Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends PaymentApplied> Event<U> select(Class<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends PaymentApplied> Event<U> select(TypeLiteral<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }
    }

    /** The dedup record of {@code event}, as the database would have stamped it at {@code processedAt}. */
    private static ProcessedEvent recorded(PaymentEvent event, Instant processedAt) {
        ProcessedEvent record = new ProcessedEvent(event);
        try {
            Field stamp = ProcessedEvent.class.getDeclaredField("processedAt");
            stamp.setAccessible(true);
            stamp.set(record, processedAt.atOffset(ZoneOffset.UTC));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return record;
    }

    private static Message message(PaymentEvent event, Instant firstSent) {
        return text(
                "{\"eventId\":\"" + event.eventId() + "\",\"accountId\":\"" + event.accountId() + "\",\"amountCents\":"
                        + event.amountCents() + "}",
                firstSent);
    }

    /** A received TextMessage: its body, first sent at {@code sent}, delivered once. */
    private static Message text(String body, Instant sent) {
        return (Message) Proxy.newProxyInstance(
                PaymentDeliveryTest.class.getClassLoader(),
                new Class<?>[] {TextMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getText" -> body;
                    case "getJMSRedelivered", "propertyExists" -> false;
                    case "getJMSTimestamp" -> sent.toEpochMilli();
                    case "getJMSMessageID" -> "ID:test-1";
                    case "getIntProperty" -> 1;
                    case "toString" -> "TextMessage " + body;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
