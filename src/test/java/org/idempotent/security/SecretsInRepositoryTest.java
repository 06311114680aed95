package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.stack.Build;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/** No credential is committed except the documented local defaults, and every one of those is documented as such. */
class SecretsInRepositoryTest {

    /** The local defaults of server-config/configuration.properties, for a developer's machine only. */
    private static final Set<String> LOCAL_DEFAULTS =
            Set.of("postgres", "payments", "admin", "payments-producer", "operator", "payments_app");

    /** Defaults that mean "no password": a feature off until configured, such as TLS to the broker. */
    private static final Set<String> NOT_SET = Set.of("", "none");

    private static final Pattern ENV_DEFAULT = Pattern.compile("\\$\\{ENV=([A-Z_]*PASSWORD):([^}]*)}");
    private static final Pattern KEY_MATERIAL = Pattern.compile(
            "-----BEGIN ([A-Z]+ )?PRIVATE KEY-----|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{36}|xox[baprs]-[A-Za-z0-9-]{10,}");
    /**
     * A literal password in configuration: password=..., <password>...</password>, PASSWORD: ... on one line (a YAML
     * key whose value is a nested mapping, such as a compose secret's definition, is not one).
     */
    private static final Pattern LITERAL_PASSWORD =
            Pattern.compile("(?i)(?:password|passwd)[\"']?[ \\t]*(?:=|:|>)[ \\t]*[\"']?([^\\s\"'<>;,)}]+)");

    @Test
    void passwordDefaultsAreTheDocumentedLocalOnes() throws IOException {
        String postBoot = Files.readString(Path.of("server-config", "post-boot-commands.asadmin"));
        List<String> configuration = Files.readAllLines(Build.CONFIGURATION);
        List<String> keys = new ArrayList<>();
        Matcher m = ENV_DEFAULT.matcher(postBoot);
        while (m.find()) {
            if (NOT_SET.contains(m.group(2))) {
                continue; // no password unless configured (a trust store's, for TLS)
            }
            keys.add(m.group(1));
            assertThat(m.group(2)).as(m.group(1)).isIn(LOCAL_DEFAULTS);
        }
        for (Map.Entry<String, String> setting : Settings.defaults().entrySet()) {
            // An empty default is no password at all (a feature off until configured, such as the broker's TLS).
            if (setting.getKey().contains("PASSWORD") && !NOT_SET.contains(setting.getValue())) {
                keys.add(setting.getKey());
                assertThat(setting.getValue()).as(setting.getKey()).isIn(LOCAL_DEFAULTS);
            }
        }

        assertThat(keys).contains("DB_PASSWORD", "BROKER_PASSWORD", "ADMIN_PASSWORD");
        for (String key : keys) {
            assertThat(commentAbove(configuration, key))
                    .as("configuration.properties documents %s as a local default", key)
                    .contains("local default only");
        }
    }

    /** The comment lines right above the key's line. */
    private static String commentAbove(List<String> lines, String key) {
        int at = lines.indexOf(lines.stream()
                .filter(line -> line.startsWith(key + "="))
                .findFirst()
                .orElseThrow(() -> new AssertionError(key + " is not in the configuration")));
        StringBuilder comment = new StringBuilder();
        for (int i = at - 1; i >= 0 && lines.get(i).startsWith("#"); i--) {
            comment.insert(0, lines.get(i) + "\n");
        }
        return comment.toString();
    }

    @Test
    void noKeyMaterialAndNoLiteralPasswordInConfiguration() throws IOException {
        List<String> findings = new ArrayList<>();
        for (Path file : trackedFiles()) {
            String name = file.getFileName().toString();
            if (!Files.isRegularFile(file) || name.endsWith(".png") || name.endsWith(".jar")) {
                continue;
            }
            String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            if (KEY_MATERIAL.matcher(text).find()) {
                findings.add(file + ": key material");
            }
            if (isConfiguration(name)) {
                Matcher m = LITERAL_PASSWORD.matcher(text);
                while (m.find()) {
                    String value = m.group(1);
                    // "${...}": supplied at run time; "...": an ellipsis in a comment.
                    if (!value.startsWith("$")
                            && !value.matches("\\.+")
                            && !LOCAL_DEFAULTS.contains(value)
                            && !NOT_SET.contains(value)) {
                        findings.add(file + ": " + m.group());
                    }
                }
            }
        }

        assertThat(findings).isEmpty();
    }

    private static boolean isConfiguration(String name) {
        return name.endsWith(".xml")
                || name.endsWith(".properties")
                || name.endsWith(".asadmin")
                || name.endsWith(".yml")
                || name.endsWith(".yaml")
                || name.endsWith(".env")
                || name.startsWith("Dockerfile")
                || name.equals("run");
    }

    /** The files git tracks; all files under the project when it is not a git checkout. */
    private static List<Path> trackedFiles() throws IOException {
        try {
            Process git = new ProcessBuilder("git", "ls-files", "-z")
                    .redirectErrorStream(false)
                    .start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (git.waitFor() == 0 && !out.isEmpty()) {
                return List.of(out.split("\0")).stream().map(Path::of).toList();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (IOException noGit) {
            // fall through to walking the tree
        }
        try (var files = Files.walk(Path.of("."))) {
            return files.filter(path -> !path.startsWith("./target") && !path.startsWith("./.git"))
                    .toList();
        }
    }
}
