package org.idempotent.payment;

import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.InvocationContext;
import jakarta.jms.Message;

/**
 * Test-only crash hook, bound to the consumer by the test WAR's ejb-jar.xml (never part of the product WAR): halts the
 * JVM after the payment's transaction has committed and before the adapter acknowledges the message - the one moment
 * at which a crash makes the broker redeliver work that is already done. Only the first delivery halts.
 */
public class HaltAfterCommit {

    public static final String PROPERTY = "haltAfterCommit";
    public static final int EXIT_CODE = 86;

    @AroundInvoke
    public Object haltAfterCommit(InvocationContext invocation) throws Exception {
        Object result = invocation.proceed();
        if (invocation.getParameters().length == 1
                && invocation.getParameters()[0] instanceof Message message
                && message.propertyExists(PROPERTY)
                && !message.getJMSRedelivered()) {
            Runtime.getRuntime().halt(EXIT_CODE);
        }
        return result;
    }
}
