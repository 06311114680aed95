package org.idempotent.stack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A TCP port nothing listens on right now, for a child process of the tests or the benchmarks: below the kernel's
 * ephemeral range. A port from that range (what binding port 0 returns) can be taken as the local port of any outgoing
 * connection between the look and the child's bind (a failover suite's backup broker once failed to start so, its
 * console's port "already in use"), and a client reconnecting to a stopped broker on such a port can even connect to
 * itself (TCP's simultaneous open), a connection that never answers.
 */
public final class FreePort {

    /** Ports handed out by this JVM, which their child may not have bound yet. */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private static final int LOWEST = 20_000;

    private FreePort() {}

    public static int find() {
        int below = Math.max(LOWEST + 1_000, Math.min(ephemeralRangeStart(), 32_768));
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
            if (!HANDED_OUT.contains(port) && nothingListensOn(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free TCP port between " + LOWEST + " and " + below);
    }

    private static boolean nothingListensOn(int port) {
        // The wildcard address: a listener on any one address (the loopback's, say) makes this bind fail.
        try (ServerSocket any = new ServerSocket()) {
            any.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    /** The first port the kernel hands to outgoing connections: Linux's setting, else Linux's default. */
    private static int ephemeralRangeStart() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        try {
            return Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException notLinux) {
            return 32_768;
        }
    }
}
