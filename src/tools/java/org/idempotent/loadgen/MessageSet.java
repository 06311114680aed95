package org.idempotent.loadgen;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.refund.entity.RefundEvent;

/**
 * The messages of a run, seeded: distinct payment events, copies of some of them (the same ID and payload, as a
 * redelivering broker or a retrying producer sends), and malformed messages of every kind, shuffled together; then,
 * if asked for, refunds of some of the payments with their copies, shuffled among themselves (sent after the
 * payments by each producer, so some arrive before their payment is applied and wait for it). Knows what the
 * database must hold afterwards. The load generator, the benchmarks and the fault suite all send one.
 *
 * <p>The seed fixes the shape (amounts, accounts, which events repeat, the order). Event IDs are new in every set,
 * random (version 4) or time-ordered (version 7), so that a rerun against the same database is not all duplicates of
 * the last one; account names start with a prefix the caller makes unique where balances are checked per run.
 */
public final class MessageSet {

    /**
     * One payment event, or a refund of {@code amountCents} of the payment {@code refunds} (null for a payment); the
     * account is the payment's either way.
     */
    public record Event(UUID id, String account, long amountCents, UUID refunds) {

        public Event(UUID id, String account, long amountCents) {
            this(id, account, amountCents, null);
        }

        public boolean isRefund() {
            return refunds != null;
        }

        /** What the event does to its account's balance. */
        public long balanceChange() {
            return isRefund() ? -amountCents : amountCents;
        }

        /** The setting that names the queue it is sent to. */
        public String queueSetting() {
            return isRefund() ? "REFUNDS_QUEUE" : "PAYMENTS_QUEUE";
        }

        public String json() {
            return isRefund()
                    ? PaymentProducer.refundJson(id, refunds, amountCents)
                    : PaymentProducer.json(id, account, amountCents);
        }

        /** The product's fingerprint of the payload: what processed_events records for it. */
        public byte[] fingerprint() {
            return isRefund()
                    ? new RefundEvent(id, refunds, amountCents, null).fingerprint()
                    : new PaymentEvent(id, account, amountCents).fingerprint();
        }
    }

    /** One message to send: a valid event, or a malformed message of kind {@code poison} identified by {@code probe}. */
    public record Item(Event event, PoisonKind poison, UUID probe) {}

    /** How the event IDs are made. */
    public enum Ids {
        RANDOM,
        /** RFC 9562 version 7: 48-bit Unix milliseconds first, so IDs of one period sort together. */
        TIME_ORDERED
    }

    private final List<Item> items;
    private final List<Event> distinct;
    private final Map<UUID, PoisonKind> poison;

    private MessageSet(List<Item> items, List<Event> distinct, Map<UUID, PoisonKind> poison) {
        this.items = List.copyOf(items);
        this.distinct = List.copyOf(distinct);
        this.poison = Map.copyOf(poison);
    }

    /**
     * @param accountPrefix accounts are named this and a number below {@code accounts}
     * @param messages valid messages, copies included
     * @param duplicates the fraction of them that are copies of another
     * @param poisonFraction malformed messages added, as a fraction of {@code messages}, every kind in turn
     */
    public static MessageSet of(
            String accountPrefix,
            long seed,
            int messages,
            double duplicates,
            int accounts,
            double poisonFraction,
            Ids ids) {
        return of(accountPrefix, seed, messages, duplicates, accounts, poisonFraction, ids, 0);
    }

    /**
     * As {@link #of(String, long, int, double, int, double, Ids)}, and refunds of {@code refunds} of the distinct
     * payments (a fraction), each of 1 cent up to the whole payment, with copies in the same proportion.
     */
    public static MessageSet of(
            String accountPrefix,
            long seed,
            int messages,
            double duplicates,
            int accounts,
            double poisonFraction,
            Ids ids,
            double refunds) {
        if (messages < 1
                || duplicates < 0
                || duplicates >= 1
                || accounts < 1
                || poisonFraction < 0
                || refunds < 0
                || refunds > 1) {
            throw new IllegalArgumentException(
                    "need messages >= 1, 0 <= duplicates < 1, accounts >= 1, poison >= 0; got " + messages + ", "
                            + duplicates + ", " + accounts + ", " + poisonFraction);
        }
        Random random = new Random(seed);
        int distinctCount = Math.max(1, (int) Math.round(messages * (1 - duplicates)));
        long millis = System.currentTimeMillis();
        List<Event> distinct = new ArrayList<>();
        for (int i = 0; i < distinctCount; i++) {
            UUID id = ids == Ids.TIME_ORDERED ? uuid7(millis + i / 10, random) : UUID.randomUUID();
            distinct.add(new Event(id, accountPrefix + random.nextInt(accounts), 1 + random.nextInt(100_000)));
        }
        List<Item> items = new ArrayList<>();
        distinct.forEach(event -> items.add(new Item(event, null, null)));
        while (items.size() < messages) {
            items.add(new Item(distinct.get(random.nextInt(distinct.size())), null, null));
        }
        Map<UUID, PoisonKind> poison = new HashMap<>();
        int poisonCount = (int) Math.round(messages * poisonFraction);
        for (int i = 0; i < poisonCount; i++) {
            UUID probe = UUID.randomUUID();
            PoisonKind kind = PoisonKind.values()[i % PoisonKind.values().length];
            poison.put(probe, kind);
            items.add(new Item(null, kind, probe));
        }
        Collections.shuffle(items, random);
        List<Event> payments = List.copyOf(distinct);
        List<Item> refundItems = new ArrayList<>();
        for (Event payment : payments) {
            if (random.nextDouble() < refunds) {
                UUID id = ids == Ids.TIME_ORDERED ? uuid7(millis + distinct.size() / 10, random) : UUID.randomUUID();
                Event refund =
                        new Event(id, payment.account(), 1 + random.nextInt((int) payment.amountCents()), payment.id());
                distinct.add(refund);
                refundItems.add(new Item(refund, null, null));
            }
        }
        int refundCopies = (int) Math.round(refundItems.size() * duplicates / (1 - duplicates));
        for (int i = 0, count = refundItems.size(); i < refundCopies && count > 0; i++) {
            refundItems.add(refundItems.get(random.nextInt(count)));
        }
        Collections.shuffle(refundItems, random);
        items.addAll(refundItems);
        return new MessageSet(items, distinct, poison);
    }

    /** {@code name}, a random mark and a dash: account names no earlier run of that name used. */
    public static String runPrefix(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    }

    /** Valid events only, with random IDs. */
    public static MessageSet of(String accountPrefix, long seed, int messages, double duplicates, int accounts) {
        return of(accountPrefix, seed, messages, duplicates, accounts, 0, Ids.RANDOM);
    }

    /** {@code copies} copies of each of {@code events} distinct events, interleaved. */
    public static MessageSet copies(String accountPrefix, long seed, int events, int copies, int accounts) {
        MessageSet once = of(accountPrefix, seed, events, 0, accounts);
        List<Item> items = new ArrayList<>();
        for (int c = 0; c < copies; c++) {
            items.addAll(once.items);
        }
        Collections.shuffle(items, new Random(seed + 1));
        return new MessageSet(items, once.distinct, Map.of());
    }

    /** This set and then {@code next}, checked as one. */
    public MessageSet and(MessageSet next) {
        List<Item> allItems = new ArrayList<>(items);
        allItems.addAll(next.items);
        List<Event> allDistinct = new ArrayList<>(distinct);
        allDistinct.addAll(next.distinct);
        Map<UUID, PoisonKind> allPoison = new HashMap<>(poison);
        allPoison.putAll(next.poison);
        return new MessageSet(allItems, allDistinct, allPoison);
    }

    public List<Item> items() {
        return items;
    }

    /** The valid events in the order they are sent, copies included. */
    public List<Event> events() {
        return items.stream()
                .filter(item -> item.event() != null)
                .map(Item::event)
                .toList();
    }

    public List<Event> distinct() {
        return distinct;
    }

    public Set<UUID> distinctIds() {
        Set<UUID> ids = new LinkedHashSet<>();
        distinct.forEach(event -> ids.add(event.id()));
        return ids;
    }

    public Map<UUID, PoisonKind> poison() {
        return poison;
    }

    public int validMessages() {
        return items.size() - poison.size();
    }

    /** Per account: its payments less their refunds, of the distinct events sent. */
    public Map<String, Long> expectedBalances() {
        Map<String, Long> expected = new HashMap<>();
        distinct.forEach(event -> expected.merge(event.account(), event.balanceChange(), Long::sum));
        return expected;
    }

    private static UUID uuid7(long millis, Random random) {
        long msb = (millis << 16) | 0x7000L | (random.nextInt() & 0x0FFF);
        long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
