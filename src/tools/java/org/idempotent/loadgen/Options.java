package org.idempotent.loadgen;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command-line options of the load generator and the benchmarks: {@code --name value}, or {@code --name} alone for
 * a switch. An option the tool does not know, or a word that is not an option, fails with the tool's usage.
 */
public final class Options {

    private final Map<String, String> values;
    private final String usage;

    private Options(Map<String, String> values, String usage) {
        this.values = values;
        this.usage = usage;
    }

    /**
     * @param known every option's name (without the dashes)
     * @param usage what to print on a mistake
     */
    public static Options parse(String[] args, Set<String> known, String usage) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || !known.contains(args[i].substring(2))) {
                throw new IllegalArgumentException("unknown option " + args[i] + "; usage: " + usage);
            }
            boolean hasValue = i + 1 < args.length && !args[i + 1].startsWith("--");
            values.put(args[i].substring(2), hasValue ? args[++i] : "true");
        }
        return new Options(values, usage);
    }

    public boolean has(String name) {
        return values.containsKey(name);
    }

    public String get(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    public int getInt(String name, int fallback) {
        return number(name, fallback, Integer::parseInt);
    }

    public long getLong(String name, long fallback) {
        return number(name, fallback, Long::parseLong);
    }

    public double getDouble(String name, double fallback) {
        return number(name, fallback, Double::parseDouble);
    }

    /** A comma-separated list. */
    public List<String> getList(String name, String fallback) {
        return Arrays.asList(get(name, fallback).split(","));
    }

    private <T> T number(String name, T fallback, java.util.function.Function<String, T> parse) {
        String value = values.get(name);
        if (value == null) {
            return fallback;
        }
        try {
            return parse.apply(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " " + value + " is not a number; usage: " + usage, e);
        }
    }
}
