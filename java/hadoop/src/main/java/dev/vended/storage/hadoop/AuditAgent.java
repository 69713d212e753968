package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The audit trail of a table's requests: the {@code User-Agent} every request of its store
 * carries, which endpoint logs show (S3 server access logs and CloudTrail record it as {@code
 * userAgent}; GCS and Azure request logs likewise):
 *
 * <pre>{@code vended-storage/<version> table/<name> [spark-app/<application id>] [<task context>]}</pre>
 *
 * after the user's own {@code user_agent} option if the table has one. The Spark application id
 * is there when the store is opened in a Spark driver or executor ({@code SparkEnv}, looked up
 * reflectively: Spark is not a dependency). A store, and so this part of its user agent, is shared
 * by every task of the JVM; the job and task ids are added per request, by the native side, from
 * the context of the thread that started the operation ({@link TaskAudit}: {@code job/<id>
 * spark-sql/<execution id> spark-task/<stage>.<partition>.<attempt> spark-tid/<task attempt id>},
 * each when known). Each part is reduced to {@code
 * [A-Za-z0-9._:-]} (anything else becomes {@code _}) and at most {@value #MAX_PART} characters;
 * nothing in it is a secret (a table name is part of a configuration key). Distinct user agents
 * make distinct HTTP clients, so each table has its own connection pool.
 */
final class AuditAgent {

    /** The storage option (object_store's client key) that sets the {@code User-Agent}. */
    static final String USER_AGENT = "user_agent";

    /** The most characters of one part (a name, an id). */
    static final int MAX_PART = 64;

    private static final String VERSION = version();

    private AuditAgent() {}

    /**
     * {@code options} with {@link #USER_AGENT} set to the table's user agent (appended to the
     * user's {@code user_agent} or {@code aws_user_agent}, which it replaces).
     *
     * @param options the table's storage options (not changed)
     * @param table the table's name
     * @return a new map
     */
    static Map<String, String> withUserAgent(Map<String, String> options, String table) {
        Map<String, String> out = new TreeMap<>(options);
        String own = out.remove(USER_AGENT);
        String aws = out.remove("aws_" + USER_AGENT);
        String base = own != null ? own : aws;
        String ours = userAgent(table, sparkAppId());
        out.put(USER_AGENT, base == null || base.isBlank() ? ours : base.trim() + " " + ours);
        return out;
    }

    /** {@code vended-storage/<version> table/<name> [spark-app/<id>]}, each part sanitized. */
    static String userAgent(String table, String sparkAppId) {
        StringBuilder b = new StringBuilder("vended-storage/").append(VERSION);
        b.append(" table/").append(part(table));
        if (sparkAppId != null && !sparkAppId.isBlank()) {
            b.append(" spark-app/").append(part(sparkAppId));
        }
        return b.toString();
    }

    /** {@code s} reduced to {@code [A-Za-z0-9._:-]} and {@link #MAX_PART} characters. */
    static String part(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_PART));
        for (int i = 0; i < s.length() && b.length() < MAX_PART; i++) {
            char c = s.charAt(i);
            boolean ok =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || c == '.'
                            || c == '_'
                            || c == ':'
                            || c == '-';
            b.append(ok ? c : '_');
        }
        return b.length() == 0 ? "_" : b.toString();
    }

    /** The Spark application id of this JVM ({@code SparkEnv.get().conf().getAppId()}), or null. */
    static String sparkAppId() {
        for (ClassLoader l :
                new ClassLoader[] {
                    Thread.currentThread().getContextClassLoader(),
                    AuditAgent.class.getClassLoader()
                }) {
            if (l == null) {
                continue;
            }
            try {
                Class<?> env = Class.forName("org.apache.spark.SparkEnv", false, l);
                Object e = env.getMethod("get").invoke(null);
                if (e == null) {
                    return null;
                }
                Object conf = e.getClass().getMethod("conf").invoke(e);
                Object id = conf.getClass().getMethod("getAppId").invoke(conf);
                return id instanceof String ? (String) id : null;
            } catch (ClassNotFoundException | LinkageError e) {
                // not in Spark (or not through this loader)
            } catch (InvocationTargetException e) {
                return null; // no spark.app.id yet
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }

    private static String version() {
        try (InputStream in = ObjectStore.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                String v = p.getProperty("version");
                if (v != null && !v.isBlank()) {
                    return part(v.trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        }
        return "unknown";
    }
}
