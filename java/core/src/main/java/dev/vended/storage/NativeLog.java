package dev.vended.storage;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.reflect.Method;

/**
 * Delivers the native library's log records to the JVM's {@link System.Logger} named {@value
 * #LOGGER_NAME} (SLF4J, Log4j and {@code java.util.logging} users route it with their usual
 * bridge) and, when SLF4J is on the class path (Spark: Log4j 2 behind it), to the SLF4J logger of
 * the same name for the records the {@code System.Logger} does not take.
 *
 * <p>The level is decided once, when the native library is loaded: the most verbose level that
 * either logger has enabled then (records below it are filtered on the native side at no cost).
 * A record goes to the {@code System.Logger} when that one takes its level, else to the SLF4J
 * logger when that one does: so in Spark, which bridges {@code java.util.logging} into SLF4J and
 * Log4j 2, the one setting that turns the library's logs on is a Log4j logger (e.g. {@code
 * logger.vended.name = dev.vended.storage}, {@code logger.vended.level = debug}), without touching
 * {@code java.util.logging}, and no record is delivered twice. The environment variable {@code
 * RUST_LOG} (a level name: {@code error}, {@code warn}, {@code info}, {@code debug}, {@code
 * trace}) overrides the level. Records reach Java from one native daemon thread, never from the
 * thread that made a call; native messages never contain secrets.
 */
final class NativeLog {

    /** The name of the logger native records go to. */
    static final String LOGGER_NAME = "dev.vended.storage.native";

    private static final Logger LOGGER = System.getLogger(LOGGER_NAME);

    /** The SLF4J logger of the same name, or {@code null} without SLF4J. */
    private static final Slf4j SLF4J = Slf4j.find();

    private NativeLog() {}

    /** Installs the native logger at the level the Java logger has enabled now. */
    static void install() {
        init(maxLevel());
    }

    /** 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace: the native side's numbering. */
    static int maxLevel() {
        return Math.max(systemLoggerLevel(), SLF4J == null ? 0 : SLF4J.maxLevel());
    }

    /** The most verbose level the {@code System.Logger} has enabled (native numbering). */
    static int systemLoggerLevel() {
        if (LOGGER.isLoggable(Level.TRACE)) {
            return 5;
        }
        if (LOGGER.isLoggable(Level.DEBUG)) {
            return 4;
        }
        if (LOGGER.isLoggable(Level.INFO)) {
            return 3;
        }
        if (LOGGER.isLoggable(Level.WARNING)) {
            return 2;
        }
        return LOGGER.isLoggable(Level.ERROR) ? 1 : 0;
    }

    private static native void init(int maxLevel);

    /** Called by the native delivery thread for each record. */
    @SuppressWarnings("unused")
    private static void log(int level, String target, String message) {
        Level l;
        switch (level) {
            case 1:
                l = Level.ERROR;
                break;
            case 2:
                l = Level.WARNING;
                break;
            case 3:
                l = Level.INFO;
                break;
            case 4:
                l = Level.DEBUG;
                break;
            default:
                l = Level.TRACE;
                break;
        }
        if (LOGGER.isLoggable(l) || SLF4J == null || !SLF4J.log(level, target, message)) {
            LOGGER.log(l, "[{0}] {1}", target, message);
        }
    }

    /**
     * The SLF4J logger named {@value #LOGGER_NAME}, called reflectively (SLF4J is not a
     * dependency: it is used when the application has it, as Spark does).
     */
    static final class Slf4j {
        /** {@code isXxxEnabled()} and {@code xxx(String, Object, Object)}, by level 1..5. */
        private final Object logger;
        private final Method[] enabled = new Method[6];
        private final Method[] write = new Method[6];

        private Slf4j(Object logger, Class<?> type) throws NoSuchMethodException {
            this.logger = logger;
            String[] names = {null, "error", "warn", "info", "debug", "trace"};
            for (int i = 1; i <= 5; i++) {
                String n = names[i];
                String capitalized = Character.toUpperCase(n.charAt(0)) + n.substring(1);
                enabled[i] = type.getMethod("is" + capitalized + "Enabled");
                write[i] = type.getMethod(n, String.class, Object.class, Object.class);
            }
        }

        /** SLF4J's logger if this class's loader (or the thread's) sees SLF4J, else null. */
        static Slf4j find() {
            for (ClassLoader l :
                    new ClassLoader[] {
                        NativeLog.class.getClassLoader(),
                        Thread.currentThread().getContextClassLoader()
                    }) {
                if (l == null) {
                    continue;
                }
                try {
                    Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, l);
                    Class<?> type = Class.forName("org.slf4j.Logger", false, l);
                    Object logger =
                            factory.getMethod("getLogger", String.class).invoke(null, LOGGER_NAME);
                    return new Slf4j(logger, type);
                } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                    // not there (or unusable): the System.Logger alone
                }
            }
            return null;
        }

        /** The most verbose level enabled, 0 to 5. */
        int maxLevel() {
            for (int i = 5; i >= 1; i--) {
                if (isEnabled(i)) {
                    return i;
                }
            }
            return 0;
        }

        private boolean isEnabled(int level) {
            try {
                return Boolean.TRUE.equals(enabled[level].invoke(logger));
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
        }

        /** Logs the record if the logger takes its level; returns whether it did. */
        boolean log(int level, String target, String message) {
            int i = Math.max(1, Math.min(5, level));
            if (!isEnabled(i)) {
                return false;
            }
            try {
                write[i].invoke(logger, "[{}] {}", target, message);
                return true;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
        }
    }
}
