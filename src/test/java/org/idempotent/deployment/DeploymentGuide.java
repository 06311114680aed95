package org.idempotent.deployment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.stack.Commands;

/**
 * The numbered steps of deployment.md's "Payara Server" section, read from the page and run as written: the commands a
 * test runs are the ones an operator reads. Only what differs on a test machine is replaced (paths under /opt and
 * /var/lib, the hosts, the ports, each {@code NAME_PASSWORD=...}), each replacement declared here and required to
 * match, so a page that stops saying what a replacement expects fails the test instead of running something else.
 */
final class DeploymentGuide {

    static final Path PAGE = Path.of("src", "site", "markdown", "deployment.md");
    static final int STEPS = 7;

    private static final Pattern SECTION = Pattern.compile("(?s)\n## Payara Server\n(.*?)\n## ");
    private static final Pattern STEP = Pattern.compile("(?m)^(\\d+)\\. \\*\\*");
    private static final Pattern BLOCK = Pattern.compile("(?s)\n( *)```sh\n(.*?)\n *```");

    private final List<String> steps;
    private final Map<Pattern, Function<MatchResult, String>> replacements = new LinkedHashMap<>();

    private DeploymentGuide(List<String> steps) {
        this.steps = steps;
    }

    /** The page's steps 1 to {@link #STEPS}, each the shell block under its number (the page's order). */
    static DeploymentGuide read() throws IOException {
        Matcher section = SECTION.matcher(Files.readString(PAGE));
        if (!section.find()) {
            throw new IllegalStateException(PAGE + " has no section '## Payara Server'");
        }
        String text = section.group(1);
        List<String> steps = new ArrayList<>();
        Matcher step = STEP.matcher(text);
        List<Integer> starts = new ArrayList<>();
        while (step.find()) {
            if (Integer.parseInt(step.group(1)) != starts.size() + 1) {
                throw new IllegalStateException(PAGE + ": step " + step.group(1) + " out of order");
            }
            starts.add(step.start());
        }
        if (starts.size() < STEPS) {
            throw new IllegalStateException(PAGE + " numbers " + starts.size() + " steps, not " + STEPS);
        }
        for (int i = 0; i < STEPS; i++) {
            int end = i + 1 < starts.size() ? starts.get(i + 1) : text.length();
            Matcher block = BLOCK.matcher(text.substring(starts.get(i), end));
            if (!block.find()) {
                throw new IllegalStateException(PAGE + ": step " + (i + 1) + " has no sh block");
            }
            String indent = block.group(1);
            steps.add(block.group(2).replaceAll("(?m)^" + indent, ""));
        }
        return new DeploymentGuide(steps);
    }

    /** Every match of {@code regex} in the steps becomes {@code replacement}'s answer for it. */
    DeploymentGuide replace(String regex, Function<MatchResult, String> replacement) {
        replacements.put(Pattern.compile(regex), replacement);
        return this;
    }

    DeploymentGuide replace(String regex, String replacement) {
        return replace(regex, match -> replacement);
    }

    /** Step {@code number} as written. */
    String written(int number) {
        return steps.get(number - 1);
    }

    /** Step {@code number} as the test runs it; a replacement that matches no step at all fails. */
    String asRun(int number) {
        for (Pattern pattern : replacements.keySet()) {
            if (steps.stream().noneMatch(step -> pattern.matcher(step).find())) {
                throw new IllegalStateException(PAGE + "'s steps no longer contain " + pattern);
            }
        }
        String step = written(number);
        for (Map.Entry<Pattern, Function<MatchResult, String>> replacement : replacements.entrySet()) {
            step = replacement
                    .getKey()
                    .matcher(step)
                    .replaceAll(match ->
                            Matcher.quoteReplacement(replacement.getValue().apply(match)));
        }
        return step;
    }

    /**
     * Runs step {@code number} with bash (stopping at the first failing command) from the checkout, in an environment
     * of {@code environment} alone: a server a step starts inherits nothing of the test run's.
     */
    String run(int number, Map<String, String> environment) {
        long started = System.nanoTime();
        String output = Commands.run(List.of("bash", "-euo", "pipefail", "-c", asRun(number)), environment, true);
        System.out.printf("%s step %d: %.1f s%n", PAGE.getFileName(), number, (System.nanoTime() - started) / 1e9);
        return output;
    }
}
