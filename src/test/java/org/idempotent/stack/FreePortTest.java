package org.idempotent.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortTest {

    @Test
    void aPortIsNeverOneTheKernelMayGiveAnOutgoingConnection() throws IOException {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        int ephemeralStart = Files.isReadable(range)
                ? Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0])
                : 32_768;
        for (int i = 0; i < 50; i++) {
            assertThat(FreePort.find()).isLessThan(Math.min(ephemeralStart, 32_768));
        }
    }

    @Test
    void aPortHandedOutIsNotHandedOutAgainBeforeItsProcessBindsIt() {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            assertThat(ports.add(FreePort.find())).isTrue();
        }
    }
}
