package org.idempotent.bench;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.stack.PayaraMicroProcess;

/**
 * The peak of Payara's used heap over a run, sampled every 250 ms from its base metrics (a sample's own cost is one
 * small HTTP request); the peak resident set size comes from the kernel ({@link CpuTime#peakRssMib}).
 */
final class HeapSampler implements AutoCloseable {

    private static final Pattern USED_HEAP = Pattern.compile("(?m)^memory_usedHeap_bytes\\{[^}]*} ([0-9.E+-]+)$");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final PayaraMicroProcess micro;
    private final AtomicLong peak = new AtomicLong();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();

    HeapSampler(PayaraMicroProcess micro) {
        this.micro = micro;
        sampler.scheduleAtFixedRate(this::sample, 0, 250, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        try {
            String body = HTTP.send(
                            HttpRequest.newBuilder(micro.uri("/metrics?scope=base"))
                                    .timeout(Duration.ofSeconds(2))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            Matcher m = USED_HEAP.matcher(body);
            if (m.find()) {
                peak.accumulateAndGet((long) Double.parseDouble(m.group(1)), Math::max);
            }
        } catch (IOException e) {
            // not up yet, or restarting: no sample
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The highest used heap seen so far, in MiB. */
    double peakMib() {
        return peak.get() / (1024.0 * 1024.0);
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
