package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Native log records reach {@code java.util.logging} (through {@code System.Logger}) at the level
 * the JVM's logger has enabled when the library loads. Each case runs in a child JVM, because the
 * level is decided once per process; {@code RUST_LOG} (which would override it) is removed from the
 * child's environment.
 */
@Timeout(120)
class NativeLogTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("logs");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** Runs {@link Child} with java.util.logging at {@code level}; returns its output. */
    private static String runChild(String level) throws Exception {
        List<String> cp = new ArrayList<>();
        for (Class<?> c :
                new Class<?>[] {
                    ObjectStore.class,
                    Child.class,
                    ChildJvm.class,
                    com.fasterxml.jackson.databind.ObjectMapper.class,
                    com.fasterxml.jackson.core.JsonFactory.class,
                    com.fasterxml.jackson.annotation.JsonProperty.class
                }) {
            cp.add(ChildJvm.codeSource(c).toString());
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (ChildJvm.xcheckJni()) {
            cmd.add("-Xcheck:jni");
        }
        String lib = System.getProperty("vended.storage.native.library");
        if (lib != null) {
            cmd.add("-Dvended.storage.native.library=" + lib);
        }
        cmd.add("-cp");
        cmd.add(String.join(File.pathSeparator, cp));
        cmd.add(Child.class.getName());
        cmd.add(server.endpoint());
        cmd.add(server.bucket());
        cmd.add(level);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("RUST_LOG");
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes(); // until the child exits
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child did not exit");
        String output = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        assertTrue(ChildJvm.JNI_WARNING.matcher(output).results().findAny().isEmpty(), output);
        return output;
    }

    private static long count(String output, String name) {
        Matcher m = Pattern.compile(name + "=(\\d+)").matcher(output);
        assertTrue(m.find(), () -> name + " missing in: " + output);
        return Long.parseLong(m.group(1));
    }

    @Test
    void refreshRecordsReachJulAtDebug() throws Exception {
        String out = runChild("FINEST");
        assertTrue(count(out, "VENDED_DEBUG") >= 1, out);
        assertTrue(count(out, "NATIVE_MAX_LEVEL") >= 4, out);
        assertEquals(0, count(out, "LEAKS"), out);
    }

    @Test
    void warningLevelFiltersDebugRecords() throws Exception {
        String out = runChild("WARNING");
        assertEquals(2, count(out, "NATIVE_MAX_LEVEL"), out);
        assertEquals(0, count(out, "BELOW_WARNING"), out);
        assertEquals(0, count(out, "LEAKS"), out);
    }

    /** The child: configures the logger, makes a refresh happen, reports what it captured. */
    public static final class Child {
        /** Strong reference: java.util.logging holds loggers weakly. */
        private static final Logger NATIVE = Logger.getLogger(NativeLog.LOGGER_NAME);

        private static final List<LogRecord> RECORDS = new CopyOnWriteArrayList<>();

        public static void main(String[] args) throws Exception {
            String endpoint = args[0];
            String bucket = args[1];
            Level level = Level.parse(args[2]);
            NATIVE.setLevel(level);
            NATIVE.setUseParentHandlers(false);
            Handler capture =
                    new Handler() {
                        @Override
                        public void publish(LogRecord r) {
                            RECORDS.add(r);
                        }

                        @Override
                        public void flush() {}

                        @Override
                        public void close() {}
                    };
            capture.setLevel(Level.ALL);
            NATIVE.addHandler(capture);

            List<String> secrets = new CopyOnWriteArrayList<>();
            StorageOptionsProvider provider =
                    () -> {
                        Map<String, String> o = AdminClient.issue(endpoint, 60_000, null);
                        secrets.add(o.get("aws_secret_access_key"));
                        secrets.add(o.get("aws_session_token"));
                        return o;
                    };
            Map<String, String> first = AdminClient.issue(endpoint, 1_500, null);
            secrets.add(first.get("aws_secret_access_key"));
            secrets.add(first.get("aws_session_token"));
            secrets.add(LocalS3Server.ROOT_SECRET_ACCESS_KEY);
            try (ObjectStore store =
                    ObjectStore.open("s3://" + bucket + "/logs/", first, provider)) {
                store.put("a.bin", new byte[] {1});
                System.out.println("NATIVE_MAX_LEVEL=" + NativeLog.maxLevel());
                // Past the first credentials' expiry: a refresh has vended a new generation.
                long expiry = Long.parseLong(first.get("expires_at_millis"));
                Thread.sleep(Math.max(0, expiry - System.currentTimeMillis() + 200));
                store.get("a.bin");
            }
            // Records arrive from the native delivery thread: wait for the refresh's record (a
            // debug level) when it is enabled, else a fixed second for any stray record.
            boolean debug = level.intValue() <= Level.FINE.intValue();
            long deadline = System.currentTimeMillis() + (debug ? 10_000 : 1_000);
            while (System.currentTimeMillis() < deadline && vendedDebug() == 0) {
                Thread.sleep(20);
            }
            long below =
                    RECORDS.stream()
                            .filter(r -> r.getLevel().intValue() < Level.WARNING.intValue())
                            .count();
            long leaks = 0;
            for (LogRecord r : RECORDS) {
                String text = java.text.MessageFormat.format(r.getMessage(), r.getParameters());
                for (String s : secrets) {
                    if (s != null && text.contains(s)) {
                        leaks++;
                    }
                }
            }
            System.out.println("VENDED_DEBUG=" + vendedDebug());
            System.out.println("BELOW_WARNING=" + below);
            System.out.println("RECORDS=" + RECORDS.size());
            System.out.println("LEAKS=" + leaks);
        }

        /**
         * Debug records of the library itself (target {@code vended_storage...}; at trace level
         * the dependencies' records are many, and a full native queue drops some).
         */
        private static long vendedDebug() {
            return RECORDS.stream()
                    .filter(r -> r.getLevel().intValue() == Level.FINE.intValue())
                    .filter(r -> r.getParameters() != null && r.getParameters().length == 2)
                    .filter(r -> String.valueOf(r.getParameters()[0]).startsWith("vended_storage"))
                    .count();
        }
    }
}
