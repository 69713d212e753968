package dev.vended.storage.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The demo against the local endpoint (bundled binary): prefix, cleanup, --keep, --help; and with
 * {@code --cloud azure|gcs} against Azurite and fake-gcs-server from {@code .tools/}.
 */
class DemoTest {

    private static final Pattern SUMMARY =
            Pattern.compile(
                    "demo summary: objects_written=(\\d+) objects_verified=(\\d+)"
                            + " credential_refreshes=(\\d+) auth_failures=(\\d+) elapsed_s=[0-9.]+");

    private record Run(int code, String out, String err) {}

    private static Run run(String... args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = Demo.run(args, o, e);
        }
        return new Run(
                code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    @Timeout(120)
    void prefixScopedRunDeletesItsObjects() throws Exception {
        Run r = run("--seconds", "4", "--threads", "2", "--ttl-seconds", "2", "--prefix", "/team/a/");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("scoped to demo-bucket/team/a/"), r.out());
        assertTrue(r.out().contains("store s3://demo-bucket/team/a/run-"), r.out());
        Matcher m = SUMMARY.matcher(r.out());
        assertTrue(m.find(), r.out());
        long written = Long.parseLong(m.group(1));
        assertTrue(written > 0);
        assertEquals(written, Long.parseLong(m.group(2)));
        assertTrue(Long.parseLong(m.group(3)) >= 1, "no refresh in 4 s of 2 s credentials");
        assertEquals("0", m.group(4));
        assertTrue(
                r.out().contains("cleanup: deleted " + written + " objects, 0 left"), r.out());
        String[] lines = r.out().strip().split("\n");
        assertTrue(lines[lines.length - 1].startsWith("demo summary: "), "summary is the last line");
    }

    /**
     * The same verified I/O on {@code --cloud azure} (Azurite, 2 s SAS tokens) and {@code --cloud
     * gcs} (fake-gcs-server behind the token-checking proxy, 2 s bearer tokens): every object
     * verified, at least one refresh, no auth failure, cleanup complete, exit 0.
     */
    @ParameterizedTest
    @ValueSource(strings = {"azure", "gcs"})
    @Timeout(120)
    void cloudRunVerifiesEveryObjectAcrossRefreshes(String cloud) throws Exception {
        Run r =
                run("--cloud", cloud, "--seconds", "5", "--threads", "2", "--ttl-seconds", "2",
                        "--prefix", "team");
        assertEquals(0, r.code(), r.out() + r.err());
        String scheme = cloud.equals("azure") ? "az" : "gs";
        assertTrue(r.out().contains("store " + scheme + "://demo-bucket/team/run-"), r.out());
        Matcher m = SUMMARY.matcher(r.out());
        assertTrue(m.find(), r.out());
        long written = Long.parseLong(m.group(1));
        assertTrue(written > 0, r.out());
        assertEquals(written, Long.parseLong(m.group(2)));
        assertTrue(Long.parseLong(m.group(3)) >= 1, "no refresh in 5 s of 2 s credentials");
        assertEquals("0", m.group(4));
        assertTrue(
                r.out().contains("cleanup: deleted " + written + " objects, 0 left"), r.out());
        assertEquals("", r.err(), "nothing on stderr");
        String[] lines = r.out().strip().split("\n");
        assertTrue(lines[lines.length - 1].startsWith("demo summary: "), "summary is the last line");
    }

    @Test
    @Timeout(120)
    void keepLeavesTheObjects() throws Exception {
        Run r = run("--seconds", "1", "--threads", "1", "--keep");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("cleanup: skipped (--keep)"), r.out());
    }

    @Test
    void helpNamesEveryOptionWithItsDefault() throws Exception {
        Demo.UsageException help = assertThrows(Demo.UsageException.class, () -> run("--help"));
        assertTrue(help.helpRequested);
        String usage = Demo.usage();
        for (String option :
                List.of(
                        "--cloud", "--local-s3", "--endpoint", "--bucket", "--access-key-id",
                        "--secret-access-key", "--session-token", "--region", "--prefix",
                        "--seconds", "--threads", "--ttl-seconds", "--keep", "--help")) {
            assertTrue(usage.contains(option + " "), option);
        }
        for (String d :
                List.of("(default: 20)", "(default: 4)", "(default: 3)", "(default: us-east-1)",
                        "(default: demo-bucket", "(default: delete them at the end)",
                        "(default: s3)")) {
            assertTrue(usage.contains(d), d);
        }
    }

    @Test
    void badCommandLinesAreUsageErrors() {
        assertThrows(Demo.UsageException.class, () -> run("--endpoint", "http://127.0.0.1:1"));
        assertThrows(Demo.UsageException.class, () -> run("--prefix", "a//b"));
        assertThrows(Demo.UsageException.class, () -> run("--seconds", "0"));
        assertThrows(Demo.UsageException.class, () -> run("--nope", "1"));
        assertThrows(Demo.UsageException.class, () -> run("--cloud", "aws"));
        assertThrows(
                Demo.UsageException.class,
                () -> run("--cloud", "azure", "--endpoint", "http://127.0.0.1:1"));
    }
}
