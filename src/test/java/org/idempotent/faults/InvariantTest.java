package org.idempotent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.idempotent.fixtures.AnnouncementSubscriber.Received;
import org.junit.jupiter.api.Test;

/** What the invariant allows on a cluster node that took a stopped peer's queue (scale-down). */
class InvariantTest {

    @Test
    void movedAnnouncementsBehindLaterOnesOfTheirAccountAreTwoInOrderRuns() {
        // Sent here: 2 and 4; moved here after them: 1 and 3 (as a clean-clone run of badce6b saw it).
        assertThat(Invariant.beyondTwoInOrderRuns(account("a", 2, 4, 1, 3))).isEmpty();
        assertThat(Invariant.beyondTwoInOrderRuns(account("a", 1, 2, 3))).isEmpty();
    }

    @Test
    void anAccountOutOfOrderBeyondTwoRunsIsNamed() {
        assertThat(Invariant.beyondTwoInOrderRuns(account("a", 3, 2, 1)))
                .containsExactly("a: sequence 1 after runs ending 3 and 2");
        assertThat(Invariant.beyondTwoInOrderRuns(account("b", 1, 4, 2, 5, 3, 6, 2)))
                .hasSize(1);
    }

    @Test
    void aCopyOnAnotherNodeAfterANodeWasLostIsTakenOnceAndNamed() {
        List<Received> sent = account("a", 1, 2);
        List<String> copies = new ArrayList<>();

        List<Received> merged = Invariant.merged(List.of(sent, List.of(sent.get(1))), true, copies);

        assertThat(merged).containsExactlyElementsOf(sent);
        assertThat(copies).containsExactly(sent.get(1).eventId() + " (sequence 2) on nodes 0 and 1");
    }

    @Test
    void aCopyOnOneNodeOrWithoutALostNodeStaysForTheChecks() {
        List<Received> sent = account("a", 1, 2);
        List<String> copies = new ArrayList<>();

        assertThat(Invariant.merged(List.of(List.of(sent.get(0), sent.get(0)), sent.subList(1, 2)), true, copies))
                .hasSize(3);
        assertThat(Invariant.merged(List.of(sent, sent.subList(1, 2)), false, copies))
                .hasSize(3);
        assertThat(copies).isEmpty();
    }

    private static List<Received> account(String account, long... sequences) {
        Instant now = Instant.now();
        return Arrays.stream(sequences)
                .mapToObj(sequence -> {
                    UUID id = UUID.randomUUID();
                    return new Received(id, account, 1, sequence, sequence, account, "d-" + id, id, sequence, now, now);
                })
                .toList();
    }
}
