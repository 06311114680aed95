package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection.Reason;
import org.junit.jupiter.api.Test;

/** What every event type's contract shares; the fields of each are tested with its parser. */
class JsonMessagesTest {

    @Test
    void bytesThatAreNotUtf8AreRejected() {
        byte[] latin1 = "{\"accountId\":\"caf\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);

        assertThatThrownBy(() -> JsonMessages.decodeUtf8(latin1))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().reason()).isEqualTo(Reason.INVALID_ENCODING));
    }

    @Test
    void utf8BytesAreDecoded() {
        String body = "{\"accountId\":\"a\"} ";

        assertThat(JsonMessages.decodeUtf8(body.getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(body);
    }
}
