package org.idempotent.operations.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.ConnectionFactory;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.idempotent.Resources;

/**
 * The consumers' own sessions on the broker, as the Artemis resource adapter holds them: for each queue an MDB of
 * this application consumes, how many of its sessions are set up and connected. A broker that accepts the readiness
 * check's outbound connection says nothing of these: after a broker restart they come back one by one, and an
 * activation the adapter tears down and sets up again has none for seconds.
 *
 * <p>The adapter has no API for it. Its public {@code getActivations()} is reached through the outbound connection
 * factory's managed connection factory (the same adapter instance), and each activation's message handlers and their
 * {@code connected} flag (set by the client's failover events) are read by reflection. The adapter is the one this
 * project assembles (pom.xml pins its version), and {@code InboundSessionsIT} reads it in a running server; another
 * version whose fields differ makes this answer {@link Reading#unreadable}, which readiness reports as DOWN with the
 * reason rather than guessing.
 */
@ApplicationScoped
public class InboundSessions {

    /** One queue's sessions: connected, and as many as its activation asks for (maxSession). */
    public record Queue(String name, int connected, int expected) {
        public boolean attached() {
            return connected >= expected && expected > 0;
        }

        @Override
        public String toString() {
            return name + " " + connected + "/" + expected;
        }
    }

    /** What was read: each queue, or why nothing could be. */
    public record Reading(List<Queue> queues, String unreadable) {
        public boolean attached() {
            return unreadable == null && !queues.isEmpty() && queues.stream().allMatch(Queue::attached);
        }
    }

    @Resource(lookup = Resources.CONNECTION_FACTORY)
    ConnectionFactory connectionFactory;

    @Inject
    @ConfigProperty(name = "PAYMENTS_QUEUE")
    String paymentsQueue;

    @Inject
    @ConfigProperty(name = "REFUNDS_QUEUE")
    String refundsQueue;

    public Reading read() {
        try {
            Object adapter = invoke(field(connectionFactory, "mcf"), "getResourceAdapter");
            Map<?, ?> activations = (Map<?, ?>) invoke(adapter, "getActivations");
            List<Object> each;
            synchronized (activations) {
                each = new ArrayList<>(activations.values());
            }
            List<Queue> queues = new ArrayList<>();
            for (String queue : List.of(paymentsQueue, refundsQueue)) {
                queues.add(queue(queue, each));
            }
            return new Reading(List.copyOf(queues), null);
        } catch (ReflectiveOperationException | ClassCastException | IllegalStateException e) {
            return new Reading(List.of(), e.toString());
        }
    }

    /** The queue's activation (none: not set up yet, 0 of 1 expected). */
    private static Queue queue(String name, List<Object> activations) throws ReflectiveOperationException {
        for (Object activation : activations) {
            Object spec = invoke(activation, "getActivationSpec");
            if (name.equals(invoke(spec, "getDestination"))) {
                int expected = (Integer) invoke(spec, "getMaxSession");
                return new Queue(name, connected(activation), expected);
            }
        }
        return new Queue(name, 0, 1);
    }

    private static int connected(Object activation) throws ReflectiveOperationException {
        List<?> handlers = (List<?>) field(activation, "handlers");
        // The adapter changes the list only while it sets up or tears down the activation: a read that meets that
        // counts nothing connected, which is what the activation has at that moment.
        List<Object> copy;
        try {
            copy = new ArrayList<>(handlers);
        } catch (ConcurrentModificationException | ArrayIndexOutOfBoundsException settingUp) {
            return 0;
        }
        int connected = 0;
        for (Object handler : copy) {
            // A handler of a failed setup stays in the list, torn down, until the adapter's next attempt clears it.
            if (handler != null
                    && (Boolean) field(handler, "connected")
                    && !(Boolean) invoke(field(handler, "session"), "isClosed")) {
                connected++;
            }
        }
        return connected;
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        for (Class<?> type = target.getClass(); type != null; type = type.getSuperclass()) {
            try {
                Field field = type.getDeclaredField(name);
                field.setAccessible(true);
                return field.get(target);
            } catch (NoSuchFieldException notHere) {
                // its superclass, then
            }
        }
        throw new NoSuchFieldException(target.getClass().getName() + "." + name);
    }

    private static Object invoke(Object target, String method) throws ReflectiveOperationException {
        try {
            return target.getClass().getMethod(method).invoke(target);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(method + " failed", e.getCause());
        }
    }
}
