package org.idempotent.stack;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/** Reads MBeans of a child JVM over remote JMX, on a loopback port without authentication (tests and benchmarks). */
public final class RemoteJmx implements AutoCloseable {

    private final JMXConnector connector;
    private final MBeanServerConnection server;

    private RemoteJmx(JMXConnector connector) throws IOException {
        this.connector = connector;
        this.server = connector.getMBeanServerConnection();
    }

    /** The JVM options that open the platform MBean server on {@code port}, bound to 127.0.0.1. */
    public static List<String> jvmOptions(int port) {
        return List.of(
                "-Dcom.sun.management.jmxremote.port=" + port,
                "-Dcom.sun.management.jmxremote.rmi.port=" + port,
                "-Dcom.sun.management.jmxremote.host=127.0.0.1",
                "-Djava.rmi.server.hostname=127.0.0.1",
                "-Dcom.sun.management.jmxremote.authenticate=false",
                "-Dcom.sun.management.jmxremote.ssl=false");
    }

    public static RemoteJmx connect(int port) throws IOException {
        return new RemoteJmx(JMXConnectorFactory.connect(
                new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi")));
    }

    public Object attribute(ObjectName name, String attribute) throws JMException, IOException {
        return server.getAttribute(name, attribute);
    }

    public Object invoke(ObjectName name, String operation) throws JMException, IOException {
        return server.invoke(name, operation, new Object[0], new String[0]);
    }

    /** An operation with one String argument. */
    public Object invoke(ObjectName name, String operation, String argument) throws JMException, IOException {
        return server.invoke(name, operation, new Object[] {argument}, new String[] {String.class.getName()});
    }

    public Set<ObjectName> names(ObjectName pattern) throws IOException {
        return server.queryNames(pattern, null);
    }

    @Override
    public void close() throws IOException {
        connector.close();
    }
}
