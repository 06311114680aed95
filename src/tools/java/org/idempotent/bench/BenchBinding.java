package org.idempotent.bench;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.enterprise.util.AnnotationLiteral;
import jakarta.interceptor.InterceptorBinding;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Benchmark-only: binds a benchmark interceptor to {@code EventProcessor.apply}, a CDI bean, in a copy of the WAR;
 * {@link BindToApply} puts it on the method, so the product's own code carries no hook.
 */
@InterceptorBinding
@Retention(RUNTIME)
@Target({METHOD, TYPE})
public @interface BenchBinding {

    /** The annotation as a value, for the extension to add. */
    final class Literal extends AnnotationLiteral<BenchBinding> implements BenchBinding {

        private static final long serialVersionUID = 1L;
        static final Literal INSTANCE = new Literal();
    }
}
