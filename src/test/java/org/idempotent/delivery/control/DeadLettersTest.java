package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DeadLettersTest {

    private static final String ID = "ID:5f0c7a7e-2a8e-4d5b-9a61-0d1f1c3b2e4a";

    @Test
    void aRedeliveryOfTheSameStoredMessageDerivesTheSameForwardId() {
        assertThat(DeadLetters.forwardId(ID, "payments.dlq", null))
                .isEqualTo(DeadLetters.forwardId(ID, "payments.dlq", null));
    }

    @Test
    void anotherQueueOrAnEarlierRejectionDerivesAnotherForwardId() {
        String first = DeadLetters.forwardId(ID, "payments.dlq", null);

        assertThat(DeadLetters.forwardId(ID, "payments.quarantine", null)).isNotEqualTo(first);
        assertThat(DeadLetters.forwardId(ID, "payments.dlq", 1764576000000L))
                .as("a replay keeps its message ID but carries the rejectedAt of its first rejection")
                .isNotEqualTo(first);
        assertThat(DeadLetters.forwardId(ID, "payments.dlq", 1764576000000L))
                .isNotEqualTo(DeadLetters.forwardId(ID, "payments.dlq", 1764579600000L));
    }

    @Test
    void propertiesOfOtherProtocolsThatJmsCannotNameAreNotForwardedUnderTheirNames() {
        assertThat(DeadLetters.isPropertyName("rejectionReason")).isTrue();
        assertThat(DeadLetters.isPropertyName("_AMQ_ORIG_QUEUE")).isTrue();
        assertThat(DeadLetters.isPropertyName("content-length")).as("STOMP").isFalse();
        assertThat(DeadLetters.isPropertyName("JMS_AMQP_MA_x-opt-jms-msg-type"))
                .as("AMQP")
                .isFalse();
        assertThat(DeadLetters.isPropertyName("1st")).isFalse();
        assertThat(DeadLetters.isPropertyName("")).isFalse();
        assertThat(DeadLetters.isPropertyName("between"))
                .as("a selector's reserved word")
                .isFalse();
    }

    @Test
    void aMessageWithoutAnIdGetsNoForwardId() {
        assertThat(DeadLetters.forwardId(null, "payments.dlq", null)).isNull();
    }
}
