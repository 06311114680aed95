package org.idempotent.delivery.control;

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
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.EventApplied;
import org.idempotent.delivery.entity.NotYetApplicable;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection;
import org.idempotent.payment.control.Payments;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.telemetry.Tracing;
import org.junit.jupiter.api.Test;

/**
 * The decisions of one delivery, with fakes at its edges: the database (what {@code apply} answers, the record a
 * duplicate finds, a release), the dead-letter queues, the announcement event and the breaker. The horizon is the real
 * one, over a 14-day window (13 days).
 */
class DeliveryTest {

    private static final UUID ID = UUID.fromString("0b5a0a6e-9d7e-4c31-8a4e-3f6a1f0c2b11");
    private static final PaymentEvent EVENT = new PaymentEvent(ID, "acc-1", 500);
    /** The event type of these tests: the payment's parser; its applier is behind the fake database. */
    private static final Payments PAYMENTS = new Payments();

    private static final int DEFERRED_DELIVERIES = 3;

    private final FakeDatabase database = new FakeDatabase();
    private final List<DeliveryResult.MovedAside> movedAside = new ArrayList<>();
    private final List<String> deferred = new ArrayList<>();
    private final List<EventApplied> announced = new ArrayList<>();
    private final List<Outcome> counted = new ArrayList<>();
    private final List<RuntimeException> breakerSaw = new ArrayList<>();
    private final Delivery delivery = new Delivery();

    DeliveryTest() {
        delivery.deferredDeliveries = DEFERRED_DELIVERIES;
        delivery.longestDeferral = 300;
        delivery.processor = database;
        delivery.horizon = new DedupHorizon();
        delivery.horizon.idTimeCounts = true; // the table by event ID
        delivery.tracing = new Tracing();
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
        delivery.metrics = new DeliveryMetrics() {
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

            @Override
            public void deferred(Message message, Duration delay, int deliveries) {
                deferred.add("delivery " + deliveries + " again in " + delay);
            }
        };
        delivery.applied = new Announcements(announced);
    }

    @Test
    void aPaymentAppliedIsAnnouncedAfterItsCommitAndCounted() {
        database.answer = Outcome.APPLIED;

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(database.applied).containsExactly(EVENT);
        assertThat(announced).containsExactly(new EventApplied(ID, Payments.KIND));
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.APPLIED);
    }

    @Test
    void aDuplicateOfTheSamePaymentIsAcknowledgedWithoutEffectOrAnnouncement() {
        database.answer = Outcome.DUPLICATE;
        database.record = recorded(EVENT, Instant.now().minusSeconds(60));

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(announced).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void aDuplicateWhoseRecordWasPurgedMeanwhileIsStillADuplicate() {
        database.answer = Outcome.DUPLICATE;

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void anIdReusedForAnotherPaymentIsMovedAsideAsAConflictWithBothFingerprints() {
        database.answer = Outcome.DUPLICATE;
        database.record =
                recorded(new PaymentEvent(ID, "acc-1", 900), Instant.now().minusSeconds(60));

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

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

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(announced).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.ALREADY_APPLIED);
    }

    @Test
    void anInvalidMessageIsDeadLetteredWithItsReasonAndNeverReachesTheDatabase() {
        delivery.receive(text("{\"eventId\":\"" + ID + "\",\"accountId\":\"acc-1\"}", Instant.now()), PAYMENTS);

        assertThat(database.applied).isEmpty();
        assertThat(movedAside).singleElement().satisfies(aside -> {
            assertThat(aside.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(aside.rejection().reason()).isEqualTo(Rejection.Reason.MISSING_FIELD);
        });
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    @Test
    void aStaleEventWithoutARecordIsQuarantinedUnapplied() {
        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(13)).minusSeconds(60)), PAYMENTS);

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

        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(13)).minusSeconds(60)), PAYMENTS);

        assertThat(database.applied).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(counted).containsExactly(Outcome.DUPLICATE);
    }

    @Test
    void aStaleEventAnAdministratorReleasedIsApplied() {
        database.released = true;
        database.answer = Outcome.APPLIED;

        delivery.receive(message(EVENT, Instant.now().minus(Duration.ofDays(20))), PAYMENTS);

        assertThat(database.applied).containsExactly(EVENT);
        assertThat(movedAside).isEmpty();
        assertThat(announced).hasSize(1);
    }

    @Test
    void aTransientFailureGoesToTheBreakerAndBackToTheBrokerWithNothingMovedOrAnnounced() {
        database.failure = new PersistenceException("connection reset");

        assertThatThrownBy(() -> delivery.receive(message(EVENT, Instant.now()), PAYMENTS))
                .isSameAs(database.failure);

        assertThat(breakerSaw).containsExactly(database.failure);
        assertThat(movedAside).isEmpty();
        assertThat(announced).isEmpty();
        assertThat(counted).containsExactly(Outcome.FAILED);
    }

    @Test
    void aPaymentTheDatabaseRefusesForGoodIsDeadLetteredNotRedelivered() {
        database.failure = new PersistenceException("refused");

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(movedAside)
                .singleElement()
                .satisfies(aside ->
                        assertThat(aside.rejection().reason()).isEqualTo(Rejection.Reason.REFUSED_BY_DATABASE));
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    @Test
    void anEventNotApplicableYetIsHeldForItsNextDeliveryAndAcknowledgedWithoutTrippingTheBreaker() {
        database.failure = new NotYetApplicable(new Rejection(Rejection.Reason.MISSING_FIELD, "waits for another"));

        delivery.receive(text(body(EVENT), Instant.now(), 1), PAYMENTS);

        assertThat(deferred).containsExactly("delivery 1 again in PT1S");
        assertThat(breakerSaw).isEmpty();
        assertThat(movedAside).isEmpty();
        assertThat(announced).isEmpty();
        assertThat(counted).containsExactly(Outcome.DEFERRED);
    }

    @Test
    void eachDeferralWaitsTwiceAsLongUpToTheBrokersOwnCap() {
        delivery.longestDeferral = 5;
        database.failure = new NotYetApplicable(new Rejection(Rejection.Reason.MISSING_FIELD, "waits for another"));

        delivery.receive(text(body(EVENT), Instant.now(), 2), PAYMENTS);
        delivery.deferredDeliveries = 10;
        delivery.receive(text(body(EVENT), Instant.now(), 4), PAYMENTS);

        assertThat(deferred).containsExactly("delivery 2 again in PT2S", "delivery 4 again in PT5S");
    }

    @Test
    void anEventStillNotApplicableAtTheLastDeliveryOfItsBudgetIsDeadLetteredWithItsReason() {
        Rejection reason = new Rejection(Rejection.Reason.MISSING_FIELD, "waits for another");
        database.failure = new NotYetApplicable(reason);

        delivery.receive(text(body(EVENT), Instant.now(), DEFERRED_DELIVERIES), PAYMENTS);

        assertThat(movedAside).singleElement().satisfies(aside -> {
            assertThat(aside.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(aside.rejection()).isEqualTo(reason);
            assertThat(aside.evidence()).containsEntry(MessageProperties.DELIVERIES, "3");
        });
        assertThat(deferred).isEmpty();
        assertThat(breakerSaw).isEmpty();
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    @Test
    void aRejectionByTheEventTypesOwnRuleIsMovedAsideWithoutCountingAsTheDatabases() {
        Rejection rule = new Rejection(Rejection.Reason.MISSING_FIELD, "past what the business allows");
        database.failure = new RejectedMessage(rule);

        delivery.receive(message(EVENT, Instant.now()), PAYMENTS);

        assertThat(breakerSaw).as("not a database failure").isEmpty();
        assertThat(movedAside)
                .singleElement()
                .satisfies(aside -> assertThat(aside.rejection()).isEqualTo(rule));
        assertThat(counted).containsExactly(Outcome.REJECTED);
    }

    /** The database as the delivery sees it through EventProcessor. */
    static final class FakeDatabase extends EventProcessor {
        Outcome answer;
        RuntimeException failure;
        ProcessedEvent record;
        boolean released;
        final List<DeliveredEvent> applied = new ArrayList<>();

        @Override
        public <E extends DeliveredEvent> Outcome apply(E event, EventType<E> type) {
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
    record Announcements(List<EventApplied> fired) implements Event<EventApplied> {

        @Override
        public void fire(EventApplied event) {
            fired.add(event);
        }

        @Override
        public <U extends EventApplied> CompletionStage<U> fireAsync(U event) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends EventApplied> CompletionStage<U> fireAsync(U event, NotificationOptions options) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Event<EventApplied> select(Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends EventApplied> Event<U> select(Class<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends EventApplied> Event<U> select(TypeLiteral<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }
    }

    /** The dedup record of {@code event}, as the database would have stamped it at {@code processedAt}. */
    private static ProcessedEvent recorded(PaymentEvent event, Instant processedAt) {
        ProcessedEvent record = new ProcessedEvent(event, Payments.KIND);
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
        return text(body(event), firstSent);
    }

    private static String body(PaymentEvent event) {
        return "{\"eventId\":\"" + event.eventId() + "\",\"accountId\":\"" + event.accountId() + "\",\"amountCents\":"
                + event.amountCents() + "}";
    }

    /** A received TextMessage: its body, first sent at {@code sent}, delivered once. */
    private static Message text(String body, Instant sent) {
        return text(body, sent, 1);
    }

    /** A received TextMessage: its body, first sent at {@code sent}, its delivery number {@code deliveries}. */
    private static Message text(String body, Instant sent, int deliveries) {
        return (Message) Proxy.newProxyInstance(
                DeliveryTest.class.getClassLoader(),
                new Class<?>[] {TextMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getText" -> body;
                    case "getJMSRedelivered" -> false;
                    // A deferred copy carries the number of the delivery before it.
                    case "propertyExists" -> MessageProperties.DELIVERIES.equals(args[0]) && deliveries > 1;
                    case "getJMSTimestamp" -> sent.toEpochMilli();
                    case "getJMSMessageID" -> "ID:test-1";
                    case "getIntProperty" -> MessageProperties.DELIVERIES.equals(args[0]) ? deliveries - 1 : 1;
                    case "toString" -> "TextMessage " + body;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
