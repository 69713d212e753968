package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;

/**
 * The tables of one bucket, as one {@link VendedFileSystem} routes paths to them: the tables whose
 * location is configured, plus those located by their catalog once the catalog has answered.
 *
 * <p>A table without a configured location is a table of every bucket until it is located: its
 * location comes from its catalog's describe, shared through {@link TableStores} (the native side
 * makes it single-flight per process and answers a recent failure at once during its backoff).
 * {@link #match} tries to locate such tables before routing, waiting only for a table's first
 * attempt in the JVM ({@link TableStores#locate}: later ones run in the background); a table that
 * cannot be located is left out of the routing until it can, so that it never breaks or delays the
 * paths of other tables. Thread-safe.
 */
final class BucketTables {

    /** A table of this bucket and its canonical location. */
    record Table(TableConfig config, TableConfig.Location location) {}

    /** What {@link #match} found: the table (or null) and, if null, the tables not yet located. */
    record Match(Table table, List<IOException> unlocated) {}

    private final String cloudScheme;
    private final String authority;
    private final Configuration conf;
    private final String vendedScheme;
    /** This bucket's known tables, longest location first. */
    private volatile List<Table> known;
    /** Tables located by their catalog that have not been located yet. */
    private volatile List<TableConfig> unlocated;

    /**
     * The tables of bucket {@code authority} of cloud {@code cloudScheme}, among {@code configs}.
     *
     * @throws IOException if a location or a table's configuration is malformed (no call is made)
     */
    BucketTables(
            String cloudScheme,
            String authority,
            Collection<TableConfig> configs,
            Configuration conf,
            String vendedScheme)
            throws IOException {
        this.cloudScheme = cloudScheme;
        this.authority = authority;
        this.conf = conf;
        this.vendedScheme = vendedScheme;
        List<Table> mine = new ArrayList<>();
        List<TableConfig> pending = new ArrayList<>();
        for (TableConfig t : configs) {
            TableStores.check(t, conf);
            if (t.location == null) {
                pending.add(t);
                continue;
            }
            TableConfig.Location loc = TableConfig.Location.parse(t.location, vendedScheme);
            if (isMine(loc)) {
                mine.add(new Table(t, loc));
            }
        }
        this.known = sorted(mine);
        this.unlocated = List.copyOf(pending);
    }

    /**
     * The open stores of this bucket's tables (located ones; see {@link TableStores#openStore}),
     * by table name.
     *
     * @return a new map
     */
    Map<String, ObjectStore> openStores() {
        Map<String, ObjectStore> m = new TreeMap<>();
        for (Table t : known) {
            ObjectStore s = TableStores.openStore(t.config());
            if (s != null) {
                m.put(t.config().name, s);
            }
        }
        return m;
    }

    private boolean isMine(TableConfig.Location loc) {
        return loc.scheme().equals(cloudScheme) && loc.authority().equals(authority);
    }

    private static List<Table> sorted(List<Table> tables) {
        List<Table> out = new ArrayList<>(tables);
        out.sort(Comparator.comparingInt((Table t) -> t.location.prefix().length()).reversed());
        return List.copyOf(out);
    }

    /**
     * The table with the longest known location containing {@code key} (a bucket key without
     * leading or trailing slash), after trying to locate the tables not located yet.
     *
     * @throws InterruptedIOException if interrupted while waiting for a table's first locate
     *     attempt
     */
    Match match(String key) throws InterruptedIOException {
        List<IOException> failures = locate();
        for (Table t : known) {
            if (t.location.contains(key)) {
                return new Match(t, List.of());
            }
        }
        return new Match(null, failures);
    }

    /** Tries to locate the unlocated tables; returns their failures. */
    private List<IOException> locate() throws InterruptedIOException {
        List<TableConfig> pending = unlocated;
        if (pending.isEmpty()) {
            return List.of();
        }
        List<IOException> failures = new ArrayList<>();
        List<Table> found = new ArrayList<>();
        List<TableConfig> located = new ArrayList<>();
        for (TableConfig t : pending) {
            try {
                TableConfig.Location loc = TableStores.locate(t, conf, vendedScheme).location();
                located.add(t);
                if (isMine(loc)) {
                    found.add(new Table(t, loc));
                }
            } catch (InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                failures.add(e);
            }
        }
        if (!located.isEmpty()) {
            synchronized (this) {
                List<TableConfig> still = new ArrayList<>(unlocated);
                List<Table> tables = new ArrayList<>(known);
                for (TableConfig t : located) {
                    if (still.remove(t)) {
                        found.stream().filter(f -> f.config == t).forEach(tables::add);
                    }
                }
                known = sorted(tables);
                unlocated = List.copyOf(still);
            }
        }
        return failures;
    }

    /** Whether a known table's location lies strictly under {@code key}. */
    boolean leadsToTable(String key) {
        for (Table t : known) {
            if (t.location.liesUnder(key)) {
                return true;
            }
        }
        return false;
    }

    /** The next segments from {@code key} towards the known locations under it, sorted. */
    TreeSet<String> leadingNames(String key) {
        TreeSet<String> names = new TreeSet<>();
        String base = key.isEmpty() ? "" : key + "/";
        for (Table t : known) {
            if (t.location.liesUnder(key)) {
                String rest = t.location.prefix().substring(base.length());
                names.add(rest.substring(0, rest.indexOf('/')));
            }
        }
        return names;
    }

    /**
     * The error for a path no known location covers while tables are not located: names each of
     * them and its failure (the first as the cause, the others suppressed).
     */
    static IOException unlocatedError(String path, List<IOException> failures) {
        StringBuilder b =
                new StringBuilder("cannot tell which table covers ")
                        .append(path)
                        .append(": no known location covers it, and ")
                        .append(failures.size())
                        .append(failures.size() == 1 ? " table" : " tables")
                        .append(" located by a catalog could not be located: ");
        for (int i = 0; i < failures.size(); i++) {
            b.append(i == 0 ? "" : "; ").append(failures.get(i).getMessage());
        }
        IOException e = new IOException(b.toString(), failures.get(0));
        for (int i = 1; i < failures.size(); i++) {
            e.addSuppressed(failures.get(i));
        }
        return e;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("[");
        List<Table> tables = known;
        for (int i = 0; i < tables.size(); i++) {
            Table t = tables.get(i);
            b.append(i == 0 ? "" : ", ")
                    .append(t.config.name)
                    .append('=')
                    .append(t.location.bucketUri())
                    .append(t.location.prefix());
        }
        b.append(']');
        List<TableConfig> pending = unlocated;
        if (!pending.isEmpty()) {
            b.append(", not located yet=[");
            for (int i = 0; i < pending.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(pending.get(i).name);
            }
            b.append(']');
        }
        return b.toString();
    }
}
