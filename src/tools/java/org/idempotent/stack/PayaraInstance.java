package org.idempotent.stack;

import java.net.URI;

/** A Payara Micro instance reached over HTTP: one this JVM started, or one already running (the run command's). */
public interface PayaraInstance {

    URI uri(String path);

    static PayaraInstance at(int httpPort) {
        return path -> URI.create("http://localhost:" + httpPort + path);
    }
}
