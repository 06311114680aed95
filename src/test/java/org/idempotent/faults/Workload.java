package org.idempotent.faults;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

/**
 * The messages of one scenario, seeded: distinct payment events, copies of some of them (the same ID and payload, as
 * a redelivering broker or a retrying producer sends), and malformed messages, shuffled together. Knows what the
 * database must hold afterwards.
 */
final class Workload {

    record Event(UUID id, String account, long amountCents) {}

    /** One message to send: a valid event, or a poison message identified by {@code probe}. */
    record Item(Event event, PoisonKind poison, UUID probe) {}

    private final List<Item> items;
    private final List<Event> distinct;
    private final Map<UUID, PoisonKind> poison;

    private Workload(List<Item> items, List<Event> distinct, Map<UUID, PoisonKind> poison) {
        this.items = items;
        this.distinct = distinct;
        this.poison = poison;
    }

    /**
     * @param messages valid messages to send, copies included
     * @param duplicates the fraction of them that are copies of another
     * @param poisonFraction malformed messages added, as a fraction of {@code messages}, every kind in turn
     */
    static Workload of(
            String scenario, long seed, int messages, double duplicates, int accounts, double poisonFraction) {
        Random random = new Random(seed);
        String prefix = scenario + "-" + Long.toString(System.nanoTime(), 36) + "-";
        int distinctCount = Math.max(1, (int) Math.round(messages * (1 - duplicates)));
        List<Event> distinct = new ArrayList<>();
        for (int i = 0; i < distinctCount; i++) {
            distinct.add(new Event(UUID.randomUUID(), prefix + random.nextInt(accounts), 1 + random.nextInt(100_000)));
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
        return new Workload(List.copyOf(items), List.copyOf(distinct), Map.copyOf(poison));
    }

    /** {@code copies} copies of each of {@code events} distinct events, interleaved. */
    static Workload copies(String scenario, long seed, int events, int copies, int accounts) {
        Workload once = of(scenario, seed, events, 0, accounts, 0);
        List<Item> items = new ArrayList<>();
        for (int c = 0; c < copies; c++) {
            items.addAll(once.items);
        }
        Collections.shuffle(items, new Random(seed + 1));
        return new Workload(List.copyOf(items), once.distinct, Map.of());
    }

    /** Two workloads sent one after the other, checked as one. */
    static Workload both(Workload first, Workload second) {
        List<Item> items = new ArrayList<>(first.items);
        items.addAll(second.items);
        List<Event> distinct = new ArrayList<>(first.distinct);
        distinct.addAll(second.distinct);
        Map<UUID, PoisonKind> poison = new HashMap<>(first.poison);
        poison.putAll(second.poison);
        return new Workload(List.copyOf(items), List.copyOf(distinct), Map.copyOf(poison));
    }

    List<Item> items() {
        return items;
    }

    List<Event> distinct() {
        return distinct;
    }

    Set<UUID> distinctIds() {
        Set<UUID> ids = new LinkedHashSet<>();
        distinct.forEach(event -> ids.add(event.id()));
        return ids;
    }

    Map<UUID, PoisonKind> poison() {
        return poison;
    }

    int validMessages() {
        return items.size() - poison.size();
    }

    /** Per account: the sum of the amounts of the distinct events sent to it. */
    Map<String, Long> expectedBalances() {
        Map<String, Long> expected = new HashMap<>();
        distinct.forEach(event -> expected.merge(event.account(), event.amountCents(), Long::sum));
        return expected;
    }
}
