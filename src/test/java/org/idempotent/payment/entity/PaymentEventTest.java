package org.idempotent.payment.entity;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PaymentEventTest {

    private static final UUID ID = UUID.fromString("0B7E6C1E-3A51-4C4E-9A59-8F4A5E2B7D10");

    @Test
    void fingerprintIsSha256OfTheCanonicalPayload() {
        // printf '%s' "0b7e6c1e-3a51-4c4e-9a59-8f4a5e2b7d10<LF>acct-1<LF>500" | sha256sum
        assertThat(HexFormat.of().formatHex(new PaymentEvent(ID, "acct-1", 500).fingerprint()))
                .isEqualTo("af9d2f7781a90616fbd2a81d6289339f656ae9a003d6c202a139b7c3c6d6b599");
    }

    @Test
    void fingerprintChangesWithAccountOrAmount() {
        byte[] original = new PaymentEvent(ID, "acct-1", 500).fingerprint();

        assertThat(new PaymentEvent(ID, "acct-1", 500).fingerprint()).isEqualTo(original);
        assertThat(new PaymentEvent(ID, "acct-1", 501).fingerprint()).isNotEqualTo(original);
        assertThat(new PaymentEvent(ID, "acct-2", 500).fingerprint()).isNotEqualTo(original);
        assertThat(new PaymentEvent(UUID.randomUUID(), "acct-1", 500).fingerprint())
                .isNotEqualTo(original);
    }
}
