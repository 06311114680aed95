package org.idempotent.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MessageSetTest {

    @Test
    void copiesAndPoisonAreMixedInAndTheBalancesCountEachEventOnce() {
        MessageSet set = MessageSet.of("acct-", 42, 1000, 0.2, 10, 0.02, MessageSet.Ids.RANDOM);

        assertThat(set.distinct()).hasSize(800);
        assertThat(set.validMessages()).isEqualTo(1000);
        assertThat(set.poison()).hasSize(20);
        assertThat(set.items()).hasSize(1020);
        assertThat(set.poison().values()).containsAll(List.of(PoisonKind.values()));
        assertThat(set.expectedBalances().values().stream()
                        .mapToLong(Long::longValue)
                        .sum())
                .isEqualTo(set.distinct().stream()
                        .mapToLong(MessageSet.Event::amountCents)
                        .sum());
        assertThat(set.events()).hasSize(1000);
        assertThat(new HashSet<>(set.events())).hasSize(800);
    }

    @Test
    void refundsFollowThePaymentsNeverExceedThemAndComeOffTheBalances() {
        MessageSet set = MessageSet.of("acct-", 42, 1000, 0.2, 10, 0, MessageSet.Ids.RANDOM, 0.25);

        List<MessageSet.Event> refunds =
                set.distinct().stream().filter(MessageSet.Event::isRefund).toList();
        assertThat(refunds).hasSizeBetween(150, 250);
        for (MessageSet.Event refund : refunds) {
            MessageSet.Event payment = set.distinct().stream()
                    .filter(event -> event.id().equals(refund.refunds()))
                    .findFirst()
                    .orElseThrow();
            assertThat(refund.account()).isEqualTo(payment.account());
            assertThat(refund.amountCents()).isBetween(1L, payment.amountCents());
            assertThat(refund.queueSetting()).isEqualTo("REFUNDS_QUEUE");
        }
        int firstRefund = set.events()
                .indexOf(set.events().stream()
                        .filter(MessageSet.Event::isRefund)
                        .findFirst()
                        .orElseThrow());
        assertThat(set.events().subList(firstRefund, set.events().size()))
                .as("every refund after every payment")
                .allMatch(MessageSet.Event::isRefund);
        assertThat(set.validMessages())
                .as("refunds with copies in the same share")
                .isGreaterThan(1000 + 150);
        long paid = set.distinct().stream()
                .filter(event -> !event.isRefund())
                .mapToLong(MessageSet.Event::amountCents)
                .sum();
        long refunded =
                refunds.stream().mapToLong(MessageSet.Event::amountCents).sum();
        assertThat(set.expectedBalances().values().stream()
                        .mapToLong(Long::longValue)
                        .sum())
                .isEqualTo(paid - refunded);
    }

    @Test
    void theSeedFixesTheShapeButEverySetHasNewIds() {
        MessageSet first = MessageSet.of("acct-", 7, 200, 0.5, 20);
        MessageSet second = MessageSet.of("acct-", 7, 200, 0.5, 20);

        assertThat(first.distinct().stream().map(MessageSet.Event::amountCents))
                .containsExactlyElementsOf(second.distinct().stream()
                        .map(MessageSet.Event::amountCents)
                        .toList());
        Set<UUID> ids = new HashSet<>(first.distinctIds());
        ids.retainAll(second.distinctIds());
        assertThat(ids).isEmpty();
    }

    @Test
    void timeOrderedIdsAreVersion7AndSortByTheirCreation() {
        MessageSet set = MessageSet.of("acct-", 1, 100, 0, 5, 0, MessageSet.Ids.TIME_ORDERED);

        assertThat(set.distinct())
                .allSatisfy(event -> assertThat(event.id().version()).isEqualTo(7));
        assertThat(set.distinct().get(0).id().getMostSignificantBits() >>> 16)
                .isLessThanOrEqualTo(set.distinct().get(99).id().getMostSignificantBits() >>> 16);
    }

    @Test
    void copiesRepeatEveryEventAndAreCheckedAsOne() {
        MessageSet copies = MessageSet.copies("acct-", 3, 50, 4, 5);
        MessageSet both = copies.and(MessageSet.of("other-", 4, 10, 0, 2));

        assertThat(copies.items()).hasSize(200);
        assertThat(copies.distinct()).hasSize(50);
        assertThat(both.distinct()).hasSize(60);
        assertThat(both.items()).hasSize(210);
    }

    @Test
    void anImpossibleShapeIsRefused() {
        assertThatThrownBy(() -> MessageSet.of("acct-", 1, 10, 1.0, 5)).hasMessageContaining("duplicates < 1");
        assertThat(MessageSet.runPrefix("load")).isNotEqualTo(MessageSet.runPrefix("load"));
    }
}
