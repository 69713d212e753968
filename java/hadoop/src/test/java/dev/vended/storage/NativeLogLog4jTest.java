package dev.vended.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The native library's logs under Spark's logging (SLF4J and Log4j 2, with {@code
 * java.util.logging} bridged into SLF4J as Spark does): one Log4j logger line turns them on,
 * without touching {@code java.util.logging}. Each case runs in a child JVM, because the level is
 * decided once per process.
 */
@Timeout(180)
class NativeLogLog4jTest {

    private static LocalS3Server server;

    @TempDir static Path dir;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("log4j-logs");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** Runs {@link Child} with a Log4j 2 configuration whose library logger is at {@code level}. */
    private static String runChild(String level) throws Exception {
        Path config = dir.resolve("log4j2-" + level + ".properties");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "rootLogger.level = warn",
                        "rootLogger.appenderRef.stdout.ref = console",
                        "appender.console.type = Console",
                        "appender.console.name = console",
                        "appender.console.layout.type = PatternLayout",
                        "appender.console.layout.pattern = %p %c: %m%n",
                        // the one setting the documentation gives
                        "logger.vended.name = dev.vended.storage",
                        "logger.vended.level = " + level,
                        ""),
                StandardCharsets.UTF_8);
        List<Path> cp = new ArrayList<>();
        for (Class<?> c :
                new Class<?>[] {
                    ObjectStore.class,
                    Child.class,
                    org.slf4j.LoggerFactory.class,
                    org.apache.logging.slf4j.SLF4JServiceProvider.class,
                    LogManager.class,
                    LoggerContext.class,
                    SLF4JBridgeHandler.class
                }) {
            cp.add(ChildJvm.codeSource(c));
        }
        cp.addAll(ChildJvm.testkitClassPath());
        List<String> jvm = new ArrayList<>();
        jvm.add("-Dlog4j2.configurationFile=" + config);
        String lib = System.getProperty("vended.storage.native.library");
        if (lib != null) {
            jvm.add("-Dvended.storage.native.library=" + lib);
        }
        ChildJvm.Result r =
                ChildJvm.run(
                        cp,
                        jvm,
                        Child.class.getName(),
                        List.of(server.endpoint(), server.bucket(), level),
                        Duration.ofSeconds(90));
        assertThat(r.exitCode()).as(r.describe()).isZero();
        assertThat(r.jniWarnings()).as(r.describe()).isEmpty();
        return r.output();
    }

    private static long count(String output, String name) {
        Matcher m = Pattern.compile(name + "=(\\d+)").matcher(output);
        assertThat(m.find()).as(name + " in " + output).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void aLog4jLoggerAtDebugTurnsTheNativeLogsOn() throws Exception {
        String out = runChild("debug");
        assertThat(count(out, "NATIVE_MAX_LEVEL")).as(out).isEqualTo(4);
        assertThat(count(out, "VENDED_DEBUG")).as(out).isGreaterThanOrEqualTo(1);
        assertThat(count(out, "LEAKS")).as(out).isZero();
    }

    @Test
    void withoutItDebugRecordsStayOff() throws Exception {
        String out = runChild("warn");
        // java.util.logging's default (INFO) still counts: records at INFO reach Log4j through
        // the bridge, which drops them at warn
        assertThat(count(out, "NATIVE_MAX_LEVEL")).as(out).isEqualTo(3);
        assertThat(count(out, "VENDED_DEBUG")).as(out).isZero();
    }

    /** The child: Spark's logging set-up, a refresh, then what Log4j received. */
    public static final class Child {
        private static final List<String> EVENTS = new CopyOnWriteArrayList<>();

        /** Captures what reaches the library's Log4j logger. */
        static final class Capture extends AbstractAppender {
            Capture() {
                super("capture", null, null, true, Property.EMPTY_ARRAY);
            }

            @Override
            public void append(LogEvent e) {
                EVENTS.add(
                        e.getLevel()
                                + " "
                                + e.getLoggerName()
                                + " "
                                + e.getMessage().getFormattedMessage());
            }
        }

        public static void main(String[] args) throws Exception {
            String endpoint = args[0];
            String bucket = args[1];
            boolean debug = args[2].equals("debug");
            // What Spark does when it initializes its logging.
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
            LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
            Capture capture = new Capture();
            capture.start();
            ctx.getConfiguration()
                    .getLoggerConfig("dev.vended.storage")
                    .addAppender(capture, null, null);
            ctx.updateLoggers();

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
            try (ObjectStore store =
                    ObjectStore.open("s3://" + bucket + "/logs/", first, provider)) {
                store.put("a.bin", new byte[] {1});
                System.out.println("NATIVE_MAX_LEVEL=" + NativeLog.maxLevel());
                // Past the first credentials' expiry: a refresh vends a new generation (a debug
                // record of the library).
                long expiry = Long.parseLong(first.get("expires_at_millis"));
                Thread.sleep(Math.max(0, expiry - System.currentTimeMillis() + 200));
                store.get("a.bin");
            }
            // Records arrive from the native delivery thread: wait for the refresh's record when
            // it is enabled, else a fixed second for any stray record.
            long deadline = System.currentTimeMillis() + (debug ? 20_000 : 1_000);
            while (System.currentTimeMillis() < deadline && vendedDebug() == 0) {
                Thread.sleep(20);
            }
            long leaks = 0;
            for (String e : EVENTS) {
                for (String s : secrets) {
                    if (s != null && e.contains(s)) {
                        leaks++;
                    }
                }
            }
            System.out.println("VENDED_DEBUG=" + vendedDebug());
            System.out.println("EVENTS=" + EVENTS.size());
            System.out.println("LEAKS=" + leaks);
        }

        /** Debug records of the library itself (target {@code vended_storage...}). */
        private static long vendedDebug() {
            return EVENTS.stream()
                    .filter(e -> e.startsWith("DEBUG dev.vended.storage.native [vended_storage"))
                    .count();
        }
    }
}
