package org.idempotent.faults;

import java.util.List;
import java.util.Map;
import org.idempotent.stack.Commands;

/**
 * A network link that goes silent: every TCP segment to or from a local port dropped by an nftables rule (root, the
 * {@code nft} of Debian's nftables, which .ci/run installs), as a lost network or a host gone from it looks to its
 * peers. No reset, no ICMP error: an established connection waits for answers that never come, and a new one for a
 * SYN-ACK. Closing it restores the link.
 */
final class SilentLink implements AutoCloseable {

    private final String table;

    private SilentLink(String table) {
        this.table = table;
    }

    /** Drops everything to and from {@code port} on this machine until closed. */
    static SilentLink cut(int port) {
        String table = "silent_link_" + port;
        nft("add table inet " + table);
        nft("add chain inet " + table + " input { type filter hook input priority -10 ; }");
        nft("add rule inet " + table + " input tcp dport " + port + " drop");
        nft("add rule inet " + table + " input tcp sport " + port + " drop");
        return new SilentLink(table);
    }

    @Override
    public void close() {
        nft("delete table inet " + table);
    }

    /** nft joins its arguments into one command line: no shell in between, so nothing to escape. */
    private static void nft(String command) {
        List<String> argv = new java.util.ArrayList<>(List.of("nft"));
        argv.addAll(List.of(command.split(" ")));
        Commands.run(argv, Map.of());
    }
}
