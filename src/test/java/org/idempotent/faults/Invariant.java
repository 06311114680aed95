package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.management.JMException;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.awaitility.core.ConditionTimeoutException;
import org.idempotent.delivery.control.MessageProperties;
import org.idempotent.fixtures.AnnouncementSubscriber;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Traffic;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * Jepsen's bank invariant, for a payment consumer, held against what the producers were told: every event whose send
 * was acknowledged is applied exactly once, every event the producers gave up on at most once; every account holds
 * exactly the sum of its events applied, no more than the producers' ledger allows and no less than it owes; the
 * queue is empty (nothing waiting, nothing stuck in delivery); the dead-letter queue holds the poison messages sent,
 * each with its reason (twice only where the producer sent it twice); every applied event is announced once, in order
 * per account. "lost" and "twice" come from the ledger, the balances and the announcements; processed_events only
 * says whose loss a loss may be: an event no consumer recorded is the broker's only if a broker failed in the scenario.
 */
final class Invariant {

    static final Path REPORT = Path.of("target", "fault-suite.txt");
    private static final String HEADER = String.format(
            "%-18s %7s %8s %8s %10s %11s %8s %5s %7s %9s %8s",
            "scenario",
            "sent",
            "distinct",
            "applied",
            "duplicates",
            "redelivered",
            "dead",
            "lost",
            "twice",
            "announced",
            "seconds");

    /**
     * One row of the suite's summary. {@code duplicatesAbsorbed}: {@code duplicate} outcomes the instances counted
     * since the previous check; {@code redelivered}: deliveries the broker marked as redelivered, over every
     * incarnation so far.
     * {@code twice}: accounts whose balance exceeds the sum of their events.
     */
    record Summary(
            String scenario,
            int sent,
            int distinct,
            long applied,
            long duplicatesAbsorbed,
            long redelivered,
            long deadLettered,
            long lost,
            long twice,
            long announced,
            double seconds) {

        String row() {
            return String.format(
                    "%-18s %7d %8d %8d %10d %11d %8d %5d %7d %9d %8.1f",
                    scenario,
                    sent,
                    distinct,
                    applied,
                    duplicatesAbsorbed,
                    redelivered,
                    deadLettered,
                    lost,
                    twice,
                    announced,
                    seconds);
        }
    }

    private Invariant() {}

    /**
     * Waits until the broker has no message of the queue left, every event is applied and every announcement sent,
     * checks everything, and prints the summary row (also appended to target/fault-suite.txt). For a stack that
     * serves several scenarios one after the other, its consumers left running:
     * balances and dedup records over {@code all} the workloads sent to it so far, the dead-letter, conflicts and
     * quarantine queues (emptied by each check) against the {@code latest} one.
     */
    static Summary checkRunning(
            String scenario, FaultStack stack, MessageSet all, MessageSet latest, long startedNanos, Duration timeout)
            throws Exception {
        return check(scenario, stack, all, latest, allAcknowledged(latest), startedNanos, timeout);
    }

    /** The same, for a latest workload sent by {@link ResendingProducers}: held to what their ledger says. */
    static Summary checkRunning(
            String scenario,
            FaultStack stack,
            MessageSet all,
            MessageSet latest,
            ResendingProducers.Ledger ledger,
            long startedNanos,
            Duration timeout)
            throws Exception {
        return check(scenario, stack, all, latest, ledger, startedNanos, timeout);
    }

    /** The ledger of producers that sent a workload without a fault: every send acknowledged, once. */
    private static ResendingProducers.Ledger allAcknowledged(MessageSet workload) {
        Set<UUID> all = workload.items().stream().map(ResendingProducers::id).collect(Collectors.toSet());
        return new ResendingProducers.Ledger(all, Set.of(), Set.of(), 0, 0, Duration.ZERO);
    }

    private static Summary check(
            String scenario,
            FaultStack stack,
            MessageSet workload,
            MessageSet latest,
            ResendingProducers.Ledger ledger,
            long startedNanos,
            Duration timeout)
            throws Exception {
        Settings settings = stack.settings();
        String queue = settings.get("PAYMENTS_QUEUE");
        String refundsQueue = settings.get("REFUNDS_QUEUE");
        try {
            // The relay too has finished: it stops with the consumers.
            await().atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> stack.messageCount(queue) + stack.messageCount(refundsQueue) == 0
                            && applied(settings, workload)
                                    == workload.distinct().size()
                            && unsent(settings) == 0);
        } catch (ConditionTimeoutException e) {
            // Not yet a verdict: the checks below say what is missing.
        }
        double seconds = (System.nanoTime() - startedNanos) / 1e9;
        long duplicates = stack.duplicatesSinceLastCheck();
        long redelivered = stack.instances().stream()
                .mapToLong(FaultStack.Instance::redeliveries)
                .sum();
        boolean restarted = stack.instanceStartedSinceLastCheck();
        boolean brokerFaulted = stack.brokerFaultedSinceLastCheck();

        long waiting = stack.messageCount(queue) + stack.messageCount(refundsQueue);
        long applied = applied(settings, workload);
        long rows = rows(settings);
        Map<String, Long> balances = balances(settings);
        // A forward cut off by a failover is redelivered and forwarded again after the broker's backoff: the queue it
        // left is empty by then only if the forward arrived. Give late ones the time; the equality below decides.
        try {
            await().atMost(Duration.ofSeconds(60))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> browse(stack, settings.get("DEAD_LETTER_QUEUE"))
                            >= latest.poison().size());
        } catch (ConditionTimeoutException e) {
            // The assertion says what is missing.
        }
        Map<UUID, String> dead = new HashMap<>();
        int unexpectedDead = drain(stack, settings.get("DEAD_LETTER_QUEUE"), dead, ledger.resent());
        Map<UUID, String> conflicts = new HashMap<>();
        int unexpectedConflicts = drain(stack, settings.get("CONFLICTS_QUEUE"), conflicts, Set.of());
        Map<UUID, String> quarantined = new HashMap<>();
        int unexpectedQuarantined = drain(stack, settings.get("QUARANTINE_QUEUE"), quarantined, Set.of());
        for (String aside : List.of("DEAD_LETTER_QUEUE", "CONFLICTS_QUEUE", "QUARANTINE_QUEUE")) {
            List<Integer> perBroker = new ArrayList<>();
            for (Settings broker : stack.brokersToRead()) {
                perBroker.add(browse(broker, settings.get(aside)));
            }
            assertThat(browse(stack, settings.get(aside)))
                    .as(
                            "%s: a second look after draining it (per broker: %s; drained %s)",
                            aside, perBroker, dead.size())
                    .isZero();
        }
        long unsent = unsent(settings);
        // With every row marked sent (asserted below), every announcement was on a broker before the count.
        List<Settings> brokers = stack.brokersToRead();
        Set<Integer> tookMovedMessages = stack.tookMovedMessagesSinceLastCheck();
        List<List<AnnouncementSubscriber.Received>> announcedPerBroker = announcements(brokers);
        List<String> copiesOnAnotherNode = new ArrayList<>();
        List<AnnouncementSubscriber.Received> announced =
                merged(announcedPerBroker, brokerFaulted, copiesOnAnotherNode);
        if (!copiesOnAnotherNode.isEmpty()) {
            System.out.printf(
                    "%s: %d announcements sent again to another node after a node was lost, taken once: %s%n",
                    scenario, copiesOnAnotherNode.size(), copiesOnAnotherNode);
        }

        // What the ledger owes: every acknowledged event of the latest workload; a given-up one only if it was applied
        // (announced), and then once. The earlier workloads were all owed in full at their own checks.
        Set<UUID> announcedIds =
                announced.stream().map(AnnouncementSubscriber.Received::eventId).collect(Collectors.toSet());
        Set<UUID> latestIds = Set.copyOf(latest.distinctIds());
        Set<UUID> owedNow = latestIds.stream()
                .filter(id -> ledger.acknowledged().contains(id)
                        || (ledger.givenUp().contains(id) && announcedIds.contains(id)))
                .collect(Collectors.toSet());
        Map<String, Long> expected = new HashMap<>();
        workload.distinct().stream()
                .filter(event -> !latestIds.contains(event.id()) || owedNow.contains(event.id()))
                .forEach(event -> expected.merge(event.account(), event.balanceChange(), Long::sum));
        Set<UUID> acknowledgedNotApplied = latestIds.stream()
                .filter(id -> ledger.acknowledged().contains(id) && !announcedIds.contains(id))
                .collect(Collectors.toSet());
        long lostByTheBroker = acknowledgedNotApplied.size() - recorded(settings, acknowledgedNotApplied);
        long wrong = expected.entrySet().stream()
                .filter(e -> !e.getValue().equals(balances.getOrDefault(e.getKey(), 0L)))
                .count();
        long twice = expected.entrySet().stream()
                .filter(e -> balances.getOrDefault(e.getKey(), 0L) > e.getValue())
                .count();
        // Refunds, from their own ledger: each owed refund recorded once, each payment refunded by exactly its owed
        // refunds (a refund applied twice would show as more).
        List<MessageSet.Event> owedRefunds = workload.distinct().stream()
                .filter(MessageSet.Event::isRefund)
                .filter(event -> !latestIds.contains(event.id()) || owedNow.contains(event.id()))
                .toList();
        Map<UUID, Long> owedPerPayment = new HashMap<>();
        owedRefunds.forEach(refund -> owedPerPayment.merge(refund.refunds(), refund.amountCents(), Long::sum));
        Set<UUID> refundsRecorded = refundsRecorded(settings, owedRefunds);
        Map<UUID, Long> refundedPerPayment = refundedPerPayment(settings, owedPerPayment.keySet());

        Summary summary = new Summary(
                scenario,
                workload.items().size(),
                workload.distinct().size(),
                applied,
                duplicates,
                redelivered,
                dead.size() + unexpectedDead,
                acknowledgedNotApplied.size(),
                twice,
                announced.size(),
                seconds);
        report(summary);

        // Unrecorded events are the broker's loss only if a broker failed meanwhile; even then a consumer that
        // acknowledged before its commit would lose them the same way, which no record tells apart.
        if (brokerFaulted) {
            assertThat(lostByTheBroker)
                    .as("events acknowledged to their producer and never recorded by a consumer, a broker having failed"
                            + " meanwhile: the broker's loss (or a consumer's that acknowledged before its commit)")
                    .isZero();
        }
        assertThat(acknowledgedNotApplied)
                .as(
                        brokerFaulted
                                ? "events acknowledged to their producer, recorded and not applied: the consumer's loss"
                                : "events acknowledged to their producer and not applied, no broker having failed:"
                                        + " the consumer's loss")
                .isEmpty();
        assertThat(twice)
                .as("accounts credited more than their producers sent them")
                .isZero();
        assertThat(wrong)
                .as("accounts whose balance is not the sum of their events acknowledged (or given up and applied)")
                .isZero();
        assertThat(owedRefunds.stream().map(MessageSet.Event::id).filter(id -> !refundsRecorded.contains(id)))
                .as("refunds owed and not in the refunds ledger: lost")
                .isEmpty();
        assertThat(refundedPerPayment)
                .as("per payment, the sum of its refunds owed: more is a refund applied twice")
                .isEqualTo(owedPerPayment);
        assertThat(balances.keySet()).as("no account other than those sent to").isEqualTo(expected.keySet());
        assertThat(rows)
                .as("processed_events holds exactly the events applied")
                .isEqualTo(workload.distinct().size() - (latestIds.size() - owedNow.size()));
        assertThat(waiting)
                .as("messages left on the queue, waiting or stuck in delivery")
                .isZero();
        assertThat(unexpectedDead).as("valid messages dead-lettered").isZero();
        assertThat(conflicts.size() + unexpectedConflicts)
                .as("messages moved to the conflicts queue")
                .isZero();
        assertThat(quarantined.size() + unexpectedQuarantined)
                .as("messages quarantined")
                .isZero();
        if (!restarted && ledger.givenUp().isEmpty()) {
            // A JVM killed mid-scenario takes the last milliseconds of its counts with it; these ran to the end.
            assertThat(duplicates)
                    .as("every built-in copy of the latest workload absorbed as a duplicate, counted by the instances")
                    .isGreaterThanOrEqualTo(
                            latest.validMessages() - latest.distinct().size());
        }
        // The announcements: every event applied since the last check, once each, in order per account, and the last
        // of each account carrying its balance.
        assertThat(unsent).as("announcements left unsent").isZero();
        assertThat(AnnouncementSubscriber.violations(announced))
                .as("what a subscriber relies on")
                .isEmpty();
        for (int index = 0; index < brokers.size(); index++) {
            // A peer's clean stop appends its queue to this one, behind later announcements sent here meanwhile: two
            // in-order runs, which the merged check above holds together by sequence, as a cluster's subscriber does.
            List<String> late = outOfOrder(announcedPerBroker.get(index));
            if (tookMovedMessages.contains(brokers.get(index).getInt("BROKER_PORT"))) {
                System.out.printf(
                        "%s: %d announcements behind a later one of their account on the node that took a peer's"
                                + " messages%n",
                        scenario, late.size());
                assertThat(beyondTwoInOrderRuns(announcedPerBroker.get(index)))
                        .as("announcements of the node that took a stopped peer's messages: its own in order and the"
                                + " moved ones in order, one account's two runs interleaved at most")
                        .isEmpty();
            } else {
                assertThat(late)
                        .as("announcements of one broker's queue out of order per account")
                        .isEmpty();
            }
        }
        assertThat(announcedIds)
                .as("announced: the events the ledger owes, no other")
                .isEqualTo(owedNow);
        AnnouncementSubscriber.lastPerAccount(announced)
                .forEach((account, last) -> assertThat(last.balanceCents())
                        .as("the last announcement of %s carries its balance", account)
                        .isEqualTo(balances.get(account)));
        Map<UUID, String> expectedDead = new HashMap<>();
        latest.poison()
                .forEach((probe, kind) -> expectedDead.put(probe, kind.reason().name()));
        expectedDead.keySet().removeIf(probe -> !ledger.acknowledged().contains(probe) && !dead.containsKey(probe));
        assertThat(dead)
                .as("the dead-letter queue holds exactly the poison sent, each with its reason")
                .isEqualTo(expectedDead);
        return summary;
    }

    static long applied(Settings settings, MessageSet workload) throws SQLException {
        try (var db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)")) {
            query.setArray(1, db.createArrayOf("uuid", workload.distinctIds().toArray()));
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    /** Which of {@code refunds} the refunds ledger holds. */
    private static Set<UUID> refundsRecorded(Settings settings, List<MessageSet.Event> refunds) throws SQLException {
        Set<UUID> found = new HashSet<>();
        try (var db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT event_id FROM refunds WHERE event_id = ANY (?)")) {
            query.setArray(
                    1,
                    db.createArrayOf(
                            "uuid", refunds.stream().map(MessageSet.Event::id).toArray()));
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    found.add(rows.getObject(1, UUID.class));
                }
            }
        }
        return found;
    }

    /** refunded_cents of each of {@code payments} in the payments ledger. */
    private static Map<UUID, Long> refundedPerPayment(Settings settings, Set<UUID> payments) throws SQLException {
        Map<UUID, Long> refunded = new HashMap<>();
        try (var db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT event_id, refunded_cents FROM payments WHERE event_id = ANY (?)")) {
            query.setArray(1, db.createArrayOf("uuid", payments.toArray()));
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    refunded.put(rows.getObject(1, UUID.class), rows.getLong(2));
                }
            }
        }
        return refunded;
    }

    /** How many of {@code ids} a consumer recorded in processed_events: delivered to it, whatever came after. */
    private static long recorded(Settings settings, Set<UUID> ids) throws SQLException {
        if (ids.isEmpty()) {
            return 0;
        }
        try (var db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)")) {
            query.setArray(1, db.createArrayOf("uuid", ids.toArray()));
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    private static long unsent(Settings settings) throws SQLException {
        try (var db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT count(*) FROM unsent_announcements");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    private static long rows(Settings settings) throws SQLException {
        try (var db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT count(*) FROM processed_events");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    /** Every account of the scenario's database, which is created fresh for it. */
    private static Map<String, Long> balances(Settings settings) throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        try (var db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT id, balance_cents FROM accounts");
                ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                balances.put(rows.getString(1), rows.getLong(2));
            }
        }
        return balances;
    }

    /** Queues are inspected as an operator inspects them, with the operator role broker.xml grants. */
    private static Connection asOperator(Settings settings) throws JMSException {
        return new ActiveMQConnectionFactory(
                        settings.brokerHaUrl(),
                        settings.get("BROKER_OPERATOR_USER"),
                        settings.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection();
    }

    /**
     * Each broker's announcements as its queue held them. Every subscriber counts its queue and attaches before any
     * takes one: a cluster node's queue left without a consumer would hand its messages to one that has (redistribution),
     * behind what that one held.
     */
    private static List<List<AnnouncementSubscriber.Received>> announcements(List<Settings> brokers)
            throws JMSException {
        List<AnnouncementSubscriber> subscribers = new ArrayList<>();
        try {
            for (Settings broker : brokers) {
                subscribers.add(new AnnouncementSubscriber(broker));
            }
            List<Integer> counted = new ArrayList<>();
            for (AnnouncementSubscriber subscriber : subscribers) {
                counted.add(subscriber.count());
            }
            subscribers.forEach(AnnouncementSubscriber::attach);
            List<List<AnnouncementSubscriber.Received>> received = new ArrayList<>();
            for (int index = 0; index < subscribers.size(); index++) {
                received.add(subscribers
                        .get(index)
                        .receiveCounted(counted.get(index), Duration.ofSeconds(10), Duration.ofMillis(500)));
            }
            return received;
        } finally {
            for (AnnouncementSubscriber subscriber : subscribers) {
                subscriber.close();
            }
        }
    }

    /**
     * One broker's announcements as they are; several brokers' (a cluster's nodes) in the order a subscriber reading
     * them all restores by each account's sequence. When {@code aNodeWasLost} since the last check, an announcement
     * on a second node with the same {@code _AMQ_DUPL_ID} is taken once and named in {@code copies}: the lost node had
     * it when it went, the relay saw no answer and sent it again, and the node it reached keeps a duplicate-ID cache
     * of its own sends only. A copy on one node, or on two without a node lost, stays for the checks to find.
     */
    static List<AnnouncementSubscriber.Received> merged(
            List<List<AnnouncementSubscriber.Received>> perBroker, boolean aNodeWasLost, List<String> copies) {
        if (perBroker.size() == 1) {
            return perBroker.get(0);
        }
        Map<String, Integer> nodeOf = new HashMap<>();
        List<AnnouncementSubscriber.Received> once = new ArrayList<>();
        for (int node = 0; node < perBroker.size(); node++) {
            for (AnnouncementSubscriber.Received r : perBroker.get(node)) {
                Integer first = nodeOf.putIfAbsent(r.duplicateId(), node);
                if (aNodeWasLost && first != null && first != node) {
                    copies.add(r.eventId() + " (sequence " + r.sequence() + ") on nodes " + first + " and " + node);
                } else {
                    once.add(r);
                }
            }
        }
        once.sort(Comparator.comparing(AnnouncementSubscriber.Received::accountId)
                .thenComparingLong(AnnouncementSubscriber.Received::sequence));
        return once;
    }

    /**
     * Announcements that fit neither of two in-order runs of their account. A node that took a stopped peer's queue
     * holds what was sent to it in order and what was moved to it in order, the moved ones behind later ones of the
     * same account: two runs, never three (each announcement goes on the run whose last is the highest below it).
     */
    static List<String> beyondTwoInOrderRuns(List<AnnouncementSubscriber.Received> received) {
        Map<String, long[]> lastOfRuns = new HashMap<>();
        List<String> beyond = new ArrayList<>();
        for (AnnouncementSubscriber.Received r : received) {
            long[] last = lastOfRuns.computeIfAbsent(r.accountId(), account -> new long[2]);
            if (last[0] < r.sequence()) {
                last[0] = r.sequence();
            } else if (last[1] < r.sequence()) {
                last[1] = r.sequence();
            } else {
                beyond.add(r.accountId() + ": sequence " + r.sequence() + " after runs ending " + last[0] + " and "
                        + last[1]);
                continue;
            }
            if (last[1] > last[0]) {
                long higher = last[1];
                last[1] = last[0];
                last[0] = higher;
            }
        }
        return beyond;
    }

    /** Announcements that came after a later one of their account. */
    private static List<String> outOfOrder(List<AnnouncementSubscriber.Received> received) {
        Map<String, Long> last = new HashMap<>();
        List<String> late = new ArrayList<>();
        for (AnnouncementSubscriber.Received r : received) {
            Long before = last.put(r.accountId(), r.sequence());
            if (before != null && r.sequence() <= before) {
                late.add(r.accountId() + ": sequence " + r.sequence() + " after " + before);
            }
        }
        return late;
    }

    /** How many messages the queue holds on every broker a client may read, without taking them. */
    private static int browse(FaultStack stack, String queueName) throws JMSException {
        int count = 0;
        for (Settings broker : stack.brokersToRead()) {
            count += browse(broker, queueName);
        }
        return count;
    }

    /** How many messages the queue holds, without taking them. */
    private static int browse(Settings settings, String queueName) throws JMSException {
        try (Connection connection = asOperator(settings)) {
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            try (QueueBrowser browser = session.createBrowser(session.createQueue(queueName))) {
                return Collections.list((Enumeration<?>) browser.getEnumeration())
                        .size();
            }
        }
    }

    /**
     * Takes everything off the queue: as many as a browse counts, waiting for each, then whatever else is there at
     * once; poison by probe with its reason. Returns how many had no probe, or a probe seen before (a message moved
     * aside twice) that its producer did not send twice.
     */
    private static int drain(FaultStack stack, String queueName, Map<UUID, String> dead, Set<UUID> sentTwice)
            throws JMSException {
        int unexpected = drainOnce(stack, queueName, dead, sentTwice);
        if (stack.brokersToRead().size() > 1) {
            // A cluster node's queue left without a consumer hands its messages to a node that has one
            // (redistribution): some may have been on their way while the consumers were attached. Until the broker
            // counts none left, on the queues or on the way.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (queued(stack, queueName) > 0 && System.nanoTime() < deadline) {
                unexpected += drainOnce(stack, queueName, dead, sentTwice);
            }
        }
        return unexpected;
    }

    private static long queued(FaultStack stack, String queueName) {
        try {
            return stack.messageCount(queueName);
        } catch (IOException | JMException e) {
            throw new IllegalStateException("the brokers' count of " + queueName, e);
        }
    }

    private static int drainOnce(FaultStack stack, String queueName, Map<UUID, String> dead, Set<UUID> sentTwice)
            throws JMSException {
        List<Settings> brokers = stack.brokersToRead();
        List<Integer> browsed = new ArrayList<>();
        for (Settings broker : brokers) {
            browsed.add(browse(broker, queueName));
        }
        // Every broker's queue read at once: a cluster node's queue left without a consumer would hand its messages
        // to one that has (redistribution), after that one's drain had counted.
        List<Connection> connections = new ArrayList<>();
        try {
            List<MessageConsumer> consumers = new ArrayList<>();
            for (Settings broker : brokers) {
                Connection connection = asOperator(broker);
                connections.add(connection);
                connection.start();
                Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
                consumers.add(session.createConsumer(session.createQueue(queueName)));
            }
            int unexpected = 0;
            for (int index = 0; index < brokers.size(); index++) {
                unexpected += take(consumers.get(index), browsed.get(index), dead, sentTwice);
            }
            return unexpected;
        } finally {
            for (Connection connection : connections) {
                connection.close();
            }
        }
    }

    private static int take(MessageConsumer consumer, int browsed, Map<UUID, String> dead, Set<UUID> sentTwice)
            throws JMSException {
        int unexpected = 0;
        for (int taken = 0; ; taken++) {
            Message message = taken < browsed ? consumer.receive(10_000) : consumer.receiveNoWait();
            if (message == null) {
                return unexpected;
            }
            String probe = message.getStringProperty(Traffic.PROBE);
            if (probe == null) {
                unexpected++;
            } else if (dead.put(UUID.fromString(probe), message.getStringProperty(MessageProperties.REASON)) != null
                    && !sentTwice.contains(UUID.fromString(probe))) {
                unexpected++;
            }
        }
    }

    private static void report(Summary summary) throws IOException {
        System.out.println(HEADER);
        System.out.println(summary.row());
        boolean fresh = !Files.exists(REPORT);
        Files.writeString(
                REPORT,
                (fresh ? HEADER + "\n" : "") + summary.row() + "\n",
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
