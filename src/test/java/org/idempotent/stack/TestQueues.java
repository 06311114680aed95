package org.idempotent.stack;

import java.util.ArrayList;
import java.util.List;

/**
 * Tests that share a broker each consume a queue of their own under {@code it.}; broker.xml grants nothing there, so
 * the test brokers add, in their etc/broker.properties, every role's rights on those queues (management excepted).
 * The product's own queues keep exactly broker.xml's grants, which BrokerLoginIT checks.
 */
public final class TestQueues {

    private static final List<String> ROLES = List.of("payments-producer", "payments-consumer", "payments-operator");
    private static final List<String> PERMISSIONS = List.of(
            "send",
            "consume",
            "browse",
            "createAddress",
            "createDurableQueue",
            "deleteDurableQueue",
            "createNonDurableQueue",
            "deleteNonDurableQueue");

    private TestQueues() {}

    public static List<String> brokerProperties() {
        List<String> lines = new ArrayList<>();
        for (String role : ROLES) {
            for (String permission : PERMISSIONS) {
                lines.add("securityRoles.\"it.#\"." + role + "." + permission + "=true");
            }
        }
        return lines;
    }
}
