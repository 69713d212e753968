package dev.vended.storage;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * Delivers the native library's log records to the JVM's {@link System.Logger} named {@value
 * #LOGGER_NAME} (SLF4J, Log4j and {@code java.util.logging} users route it with their usual
 * bridge).
 *
 * <p>The level is decided once, when the native library is loaded: the most verbose level that
 * logger has enabled then (records below it are filtered on the native side at no cost). The
 * environment variable {@code RUST_LOG} (a level name: {@code error}, {@code warn}, {@code info},
 * {@code debug}, {@code trace}) overrides it. Records reach Java from one native daemon thread,
 * never from the thread that made a call; native messages never contain secrets.
 */
final class NativeLog {

    /** The name of the logger native records go to. */
    static final String LOGGER_NAME = "dev.vended.storage.native";

    private static final Logger LOGGER = System.getLogger(LOGGER_NAME);

    private NativeLog() {}

    /** Installs the native logger at the level the Java logger has enabled now. */
    static void install() {
        init(maxLevel());
    }

    /** 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace: the native side's numbering. */
    static int maxLevel() {
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
        LOGGER.log(l, "[{0}] {1}", target, message);
    }
}
