package org.idempotent.bench;

import jakarta.enterprise.inject.spi.Extension;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipFile;
import org.idempotent.delivery.control.EventProcessor;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.schema.boundary.SchemaMigration;
import org.idempotent.stack.Build;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.ServerRuntime;
import org.idempotent.stack.Settings;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Payara Micro with a WAR (the product, or a copy with a benchmark interceptor), draining a preloaded set twice:
 * first as it starts (cold: the JIT compiles the whole path while it consumes), then, with the queue paused, the
 * database reset and the set preloaded again, once the queue resumes (warm: what a consumer that has been running
 * does). Each pass is timed by the broker's own count of unacknowledged messages, from the first acknowledgement to
 * the last, and checked.
 */
final class ContainerRuns {

    /** How the benchmark's own copies of the WAR (with an interceptor) are named. */
    private static final String BENCH_COPY = "bench-";

    private static final Pattern MIGRATION = Pattern.compile("WEB-INF/classes/db/migration/V(\\d+)__.*\\.sql");

    private static final String OUTBOX_MIGRATION = "WEB-INF/classes/db/migration/V6__payment_announcements.sql";

    /**
     * Payara's JVM options for a run: a different java binary as {@code java:PATH}, another build's Payara Micro, adapter
     * and server libraries as {@code runtime:DIR} (its {@code target/runtime}), {@code cds} for the run's
     * class-data-sharing archive of Payara Micro (written by the unmeasured start), Payara Micro's own options as
     * {@code micro:--option}, the rest as they are.
     */
    record Jvm(Path java, ServerRuntime runtime, boolean sharing, List<String> micro, List<String> options) {

        static final String SHARING = "cds";

        static final String MICRO = "micro:";

        static final String RUNTIME = "runtime:";

        static Jvm of(List<String> tokens) {
            return new Jvm(
                    valueOf(tokens, "java:").map(Path::of).orElse(null),
                    valueOf(tokens, RUNTIME)
                            .map(dir -> new ServerRuntime(Path.of(dir)))
                            .orElse(null),
                    tokens.contains(SHARING),
                    tokens.stream()
                            .filter(option -> option.startsWith(MICRO))
                            .map(option -> option.substring(MICRO.length()))
                            .toList(),
                    tokens.stream()
                            .filter(option -> !option.startsWith("java:")
                                    && !option.startsWith(RUNTIME)
                                    && !option.equals(SHARING)
                                    && !option.startsWith(MICRO))
                            .toList());
        }

        private static Optional<String> valueOf(List<String> tokens, String prefix) {
            return tokens.stream()
                    .filter(option -> option.startsWith(prefix))
                    .map(option -> option.substring(prefix.length()))
                    .findFirst();
        }

        /** The value a {@code -DKEY=value} option gives a setting, if one does. */
        Optional<String> setting(String key) {
            return options.stream()
                    .filter(option -> option.startsWith("-D" + key + "="))
                    .map(option -> option.substring(key.length() + 3))
                    .reduce((first, last) -> last);
        }

        Jvm plus(List<String> more) {
            Jvm added = of(more);
            List<String> all = new ArrayList<>(options);
            all.addAll(added.options());
            List<String> allMicro = new ArrayList<>(micro);
            allMicro.addAll(added.micro());
            return new Jvm(
                    added.java() == null ? java : added.java(),
                    added.runtime() == null ? runtime : added.runtime(),
                    sharing || added.sharing(),
                    allMicro,
                    all);
        }

        PayaraMicroProcess start(String name, Settings settings, Path war) {
            if ((java != null || runtime != null) && (sharing || !micro.isEmpty())) {
                throw new IllegalArgumentException(
                        "cds and micro: are for this build's Payara runs on this JDK, not java: or runtime:");
            }
            if (runtime != null) {
                return PayaraMicroProcess.start(name, settings, war, runtime, java, options);
            }
            return java == null
                    ? PayaraMicroProcess.start(name, settings, war, options, sharing, micro)
                    : PayaraMicroProcess.start(name, settings, war, false, java, options);
        }
    }

    private final BenchStack stack;
    private final Jvm base;
    private final Path profile;
    private double peakHeapMib;
    private double peakRssMib;
    /** The measured window of the profiled pass, if one was profiled. */
    private Instant profiledFrom;

    private Instant profiledTo;

    private long profiledMessages;
    /** Whether the product, the bare consumer and the --duplicate-cost runs drain the set a third time (--steady). */
    private boolean steady;
    /** What each pass wrote to the outbox (--outbox-writes); null: not counted. */
    private OutboxWrites outboxWrites;

    /**
     * @param base Payara's JVM options for every run
     * @param profile where the profiled pass writes its flight recording; null: none is profiled
     */
    ContainerRuns(BenchStack stack, Jvm base, Path profile) {
        this.stack = stack;
        this.base = base;
        this.profile = profile;
    }

    void steadyToo() {
        steady = true;
    }

    void countOutboxWrites() {
        outboxWrites = new OutboxWrites(stack.settings);
    }

    /** Before a pass, while nothing consumes: what the outbox holds so far, if this run counts it. */
    private void passStarts() throws Exception {
        if (outboxWrites != null) {
            outboxWrites.passStarts();
        }
    }

    /** The cold and the warm pass of {@code variant} at {@code sessions}, on a fresh database with a past of {@code pastRows}. */
    List<Result> run(
            String variant,
            int sessions,
            Path war,
            MessageSet messages,
            long pastRows,
            List<String> jvm,
            boolean profiled)
            throws Exception {
        Jvm options = base.plus(jvm);
        // A variant's -DDEDUP_PARTITIONING installs its layout: the setting counts when the schema is installed only.
        stack.freshSchema(lastMigration(war), options.setting(SchemaMigration.DEDUP_PARTITIONING));
        if (pastRows > 0) {
            stack.prefill(pastRows);
        }
        stack.preload(messages);
        stack.announcements().reset(); // what an earlier variant's run left arriving
        if (profiled) {
            options = options.plus(List.of("-XX:StartFlightRecording=filename=" + profile.toAbsolutePath()
                    + ",settings=profile,dumponexit=true"));
        }
        Settings instance = stack.settings.with("CONSUMER_MAX_SESSIONS", String.valueOf(sessions));
        passStarts();
        long jvmStart = System.nanoTime();
        try (PayaraMicroProcess micro = options.start("bench-" + sessions, instance, war);
                HeapSampler heap = new HeapSampler(micro)) {
            Instant coldStart = Instant.now();
            // Asked every 100 ms from beside the pass: one HTTP request each, next to 20,000 messages.
            CompletableFuture<Double> ready = CompletableFuture.supplyAsync(() -> {
                micro.awaitReady(PayaraMicroProcess.READY_TIMEOUT, Duration.ofMillis(100));
                return (System.nanoTime() - jvmStart) / 1e9;
            });
            boolean announces = announces(war);
            Result cold = drain(variant + Result.COLD, sessions, messages, micro, announces, false, jvmStart)
                    .ready(ready.get(PayaraMicroProcess.READY_TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            System.out.printf(Locale.ROOT, "    JVM start to readiness %.1f s%n", cold.toReady());
            printMemory(micro, heap);
            passStarts();
            stack.again(messages, coldStart);
            Result warm = drain(variant, sessions, messages, micro, announces, profiled, 0);
            printMemory(micro, heap);
            if (!steady || !(variant.equals("product") || DuplicateCost.isRun(variant))) {
                return List.of(cold, warm);
            }
            passStarts();
            stack.again(messages, coldStart);
            return List.of(cold, warm, drain(variant + Result.STEADY, sessions, messages, micro, announces, false, 0));
        }
    }

    /**
     * The bare consumer ({@link BareConsumer}) timed and checked as a Payara instance is: a fresh JVM on a fresh schema
     * with the set preloaded, a cold pass, then a warm one; every pass until its relay has published everything.
     */
    List<Result> runBare(String variant, int sessions, MessageSet messages) throws Exception {
        stack.freshSchema();
        return runChild(variant, sessions, messages, true, BareConsumer.Child::new);
    }

    /**
     * The Camel peer ({@link CamelPeer}) timed as a Payara instance is, with the JVM options of the run's Payara: a
     * fresh JVM on a fresh schema (the product's, and Camel's repository table) with the set preloaded, a cold pass,
     * then a warm one; checked for exact balances, and for one announcement per applied payment where it publishes
     * (none where it does not).
     */
    List<Result> runCamel(CamelPeer.Variant peer, int sessions, MessageSet messages) throws Exception {
        stack.freshSchema();
        stack.sql(CamelPeer.TABLE);
        return runChild(
                peer.label, sessions, messages, false, settings -> new CamelPeer.Child(settings, peer, base.options()));
    }

    /** What starts a consumer's JVM of the benchmark's own (the bare consumer, the Camel peer) with its settings. */
    @FunctionalInterface
    private interface ChildStart {
        ChildProcess start(Settings settings) throws IOException;
    }

    /**
     * A consumer's JVM other than Payara on the fresh schema, timed and checked as a Payara instance is: the set
     * preloaded, a cold pass from the JVM's start, then a warm one (and a third with --steady); each pass until its
     * relay has published everything too with {@code announces}.
     */
    private List<Result> runChild(
            String variant, int sessions, MessageSet messages, boolean announces, ChildStart start) throws Exception {
        stack.preload(messages);
        stack.announcements().reset();
        Settings instance = stack.settings.with("CONSUMER_MAX_SESSIONS", String.valueOf(sessions));
        passStarts();
        long jvmStart = System.nanoTime();
        try (ChildProcess child = start.start(instance)) {
            Instant coldStart = Instant.now();
            Result cold = drain(
                    variant + Result.COLD, sessions, messages, child.pid(), child.log(), announces, false, jvmStart);
            passStarts();
            stack.again(messages, coldStart);
            Result warm = drain(variant, sessions, messages, child.pid(), child.log(), announces, false, 0);
            if (!steady) {
                return List.of(cold, warm);
            }
            passStarts();
            stack.again(messages, coldStart);
            return List.of(
                    cold,
                    warm,
                    drain(variant + Result.STEADY, sessions, messages, child.pid(), child.log(), announces, false, 0));
        }
    }

    /** A pass of a Payara instance: {@link #drain(String, int, MessageSet, long, Path, boolean, boolean, long)}. */
    Result drain(
            String variant,
            int sessions,
            MessageSet messages,
            PayaraMicroProcess micro,
            boolean announces,
            boolean profiled,
            long jvmStart)
            throws Exception {
        return drain(variant, sessions, messages, micro.pid(), micro.log(), announces, profiled, jvmStart);
    }

    /**
     * Times the queue from the first acknowledgement to the last, by the broker's own count, and checks the result;
     * also from {@code jvmStart} (System.nanoTime() before Payara's JVM was started) to the last, unless it is 0. With
     * {@code announces} (the product's WAR), the pass also waits for the relay to have published everything, and
     * checks that each applied event was announced once.
     */
    Result drain(
            String variant,
            int sessions,
            MessageSet messages,
            long consumer,
            Path log,
            boolean announces,
            boolean profiled,
            long jvmStart)
            throws Exception {
        long total = messages.items().size();
        long first = 0;
        long counted = total;
        long last;
        double[] cpuAtFirst = null;
        StatementCounts.Snapshot statementsAtFirst = null;
        RelayPasses.Snapshot relayAtFirst = null;
        RelayPasses.Passes relay = null;
        long analysesBefore = stack.analyses();
        long analysesInPass = 0;
        double cpuMillis;
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (true) {
            long waiting = stack.broker().messageCount(stack.queue());
            long now = System.nanoTime();
            if (first == 0 && waiting < total) {
                first = now;
                // The clock starts here: only the messages still waiting now are counted against it.
                counted = waiting;
                cpuAtFirst = stack.cpu(consumer);
                statementsAtFirst = stack.statements();
                relayAtFirst = stack.relayPasses();
                if (profiled) {
                    profiledFrom = Instant.now();
                }
            }
            if (waiting == 0 && (!announces || stack.unsentAnnouncements() == 0)) {
                last = now;
                double[] cpuAtLast = stack.cpu(consumer);
                cpuMillis = BenchStack.printCpu(consumerName(variant), cpuAtFirst, cpuAtLast, counted);
                if (statementsAtFirst != null) {
                    StatementCounts.print(stack.settings, statementsAtFirst, counted);
                }
                if (relayAtFirst != null) {
                    relay = RelayPasses.passEnded(stack.settings, relayAtFirst, counted, cpuAtLast[2] - cpuAtFirst[2]);
                }
                long analyses = stack.analyses();
                analysesInPass = analyses - analysesBefore;
                System.out.printf(
                        "    Autovacuum: %d analyses of the database's tables in the pass (%d since it was made)%n",
                        analysesInPass, analyses);
                if (profiled) {
                    profiledTo = Instant.now();
                    profiledMessages = counted;
                }
                break;
            }
            if (now > deadline) {
                throw new IllegalStateException(variant + ": " + waiting + " messages still waiting; see " + log);
            }
            if (ProcessHandle.of(consumer).map(process -> !process.isAlive()).orElse(true)) {
                // A JVM refused its options, say: not twenty minutes of waiting for nothing.
                throw new IllegalStateException(variant + ": the consumer's JVM exited; see " + log);
            }
            Thread.sleep(20);
        }
        String checked = check(variant, messages, announces);
        // After the check: it waits for the announcements, so the relay is done with the pass.
        OutboxWrites.Writes outbox = outboxWrites == null
                ? null
                : outboxWrites.passEnded(last, messages.distinct().size());
        return Report.print(new Result(
                variant,
                sessions,
                (int) counted,
                (last - first) / 1e9,
                checked,
                jvmStart == 0 ? 0 : (last - jvmStart) / 1e9,
                cpuMillis,
                0,
                outbox,
                relay,
                analysesInPass));
    }

    /** The consumer's JVM, as the CPU line names it. */
    private static String consumerName(String variant) {
        if (variant.startsWith(ThroughputBenchmark.BARE)) {
            return "bare JVM";
        }
        return CamelPeer.Variant.of(variant).isPresent() ? "Camel JVM" : "Payara";
    }

    /** Every pass checks what it can: exact balances, and with the outbox one announcement per applied event. */
    private String check(String variant, MessageSet messages, boolean announces) throws Exception {
        Optional<CamelPeer.Variant> peer = CamelPeer.Variant.of(variant);
        if (peer.isPresent()) {
            // The peer publishes as it commits: nothing is left to wait for but the subscriber's queue.
            long distinct = messages.distinct().size();
            long expected = peer.get().publishes ? distinct : 0;
            long announced = stack.awaitAnnouncements(expected);
            if (announced != expected) {
                throw new IllegalStateException(variant + ": WRONG, " + announced + " announced, expected " + expected);
            }
            return stack.checkBalances(messages) + (expected == 0 ? ", nothing announced" : ", each announced once");
        }
        if (announces) {
            long distinct = messages.distinct().size();
            long announced = stack.awaitAnnouncements(distinct);
            return stack.checkBalances(messages)
                    + (announced == distinct
                            ? ", each announced once"
                            : ", WRONG: " + announced + " announced of " + distinct);
        }
        if (variant.startsWith(ThroughputBenchmark.CONTAINER_CEILING)) {
            if (stack.count("SELECT count(*) FROM accounts") != 0) {
                throw new IllegalStateException(variant + ": WRONG, the database was touched");
            }
            return "no database effect";
        }
        if (variant.startsWith(ThroughputBenchmark.DEDUP_OFF)) {
            return "not checked: without dedup duplicates are applied twice";
        }
        return stack.checkBalances(messages);
    }

    /** Payara's peak used heap (sampled) and peak resident set (the kernel's high-water mark) since it started. */
    private void printMemory(PayaraMicroProcess micro, HeapSampler heap) {
        double rss = CpuTime.peakRssMib(micro.pid());
        peakHeapMib = Math.max(peakHeapMib, heap.peakMib());
        peakRssMib = Math.max(peakRssMib, rss);
        System.out.printf(
                Locale.ROOT, "    Payara memory so far: peak heap %.0f MiB, peak RSS %.0f MiB%n", heap.peakMib(), rss);
    }

    double peakHeapMib() {
        return peakHeapMib;
    }

    double peakRssMib() {
        return peakRssMib;
    }

    /**
     * Whether a pass of this WAR is timed until its relay has published everything, and checked for one announcement
     * per applied event: the product's WAR (with whatever JVM options), and another build of the product that has the
     * outbox (--compare war:, the product before a change), so that the two are timed alike. Not the benchmark's own
     * copies: outbox off announces nothing.
     */
    /** The version of the last migration in a WAR other than today's (an older commit's), else null: all of them. */
    static String lastMigration(Path war) throws IOException {
        if (war.equals(Build.WAR) || war.getFileName().toString().startsWith(BENCH_COPY)) {
            return null;
        }
        try (ZipFile zip = new ZipFile(war.toFile())) {
            return zip.stream()
                    .map(entry -> MIGRATION.matcher(entry.getName()))
                    .filter(Matcher::matches)
                    .map(name -> name.group(1))
                    .max(Comparator.comparingInt(Integer::parseInt))
                    .orElseThrow(() -> new IllegalArgumentException(war + " holds no migration"));
        }
    }

    static boolean announces(Path war) throws IOException {
        if (war.equals(Build.WAR)) {
            return true;
        }
        if (war.getFileName().toString().startsWith(BENCH_COPY)) {
            return false;
        }
        try (ZipFile zip = new ZipFile(war.toFile())) {
            return zip.getEntry(OUTBOX_MIGRATION) != null;
        }
    }

    /** The profiled pass's flight recording summarised over its measured window, if one was profiled. */
    void summarizeProfile() throws Exception {
        if (profiledFrom != null && profile != null && profile.toFile().exists()) {
            Profile.summarize(profile, profiledFrom, profiledTo, profiledMessages);
        }
    }

    /**
     * A copy of the product WAR with a benchmark interceptor bound to one method: of an EJB by an ejb-jar.xml, of
     * EventProcessor (a CDI bean, only {@code apply}) by the {@link BindToApply} extension.
     */
    static Path benchWar(Path dir, Class<?> interceptor, String bean, String method) {
        Path war = dir.resolve(BENCH_COPY + interceptor.getSimpleName() + "-" + bean + ".war");
        WebArchive copy = ShrinkWrap.createFromZipFile(WebArchive.class, Build.WAR.toFile())
                .addClass(interceptor);
        if (bean.equals(EventProcessor.class.getSimpleName()) && method.equals("apply")) {
            copy.addClasses(BenchBinding.class, BenchBinding.Literal.class, BindToApply.class)
                    .addAsServiceProvider(Extension.class, BindToApply.class);
        } else {
            copy.addAsWebInfResource(
                    new StringAsset("""
                    <ejb-jar xmlns="https://jakarta.ee/xml/ns/jakartaee" version="4.0">
                        <interceptors><interceptor><interceptor-class>%1$s</interceptor-class></interceptor></interceptors>
                        <assembly-descriptor>
                            <interceptor-binding>
                                <ejb-name>%2$s</ejb-name>
                                <interceptor-class>%1$s</interceptor-class>
                                <method><method-name>%3$s</method-name></method>
                            </interceptor-binding>
                        </assembly-descriptor>
                    </ejb-jar>""".formatted(interceptor.getName(), bean, method)), "ejb-jar.xml");
        }
        copy.as(ZipExporter.class).exportTo(war.toFile(), true);
        return war;
    }
}
