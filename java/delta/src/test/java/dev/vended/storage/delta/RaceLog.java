package dev.vended.storage.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * What a raced Delta table's log holds, read through {@link VendedLogStore} after the writers
 * stopped (the checker of the two-driver races, {@link SparkRace}): the commit versions listed,
 * which append each version holds (the {@code userMetadata} {@code w<writer>-<i>} of its commit),
 * the commits and rows (the {@code numRecords} of its add actions) per append, and the data files
 * the add actions name, with those absent from the store.
 *
 * @param versions the versions of the {@code _delta_log/<version>.json} files, in listing order
 * @param appendByVersion the append each version holds ({@code null}: none, e.g. the create)
 * @param commits per append, the versions holding it
 * @param rows per append, the rows its add actions record
 * @param dataFiles the data files the add actions name (relative to the table)
 * @param missingFiles those of them that are not in the store
 */
record RaceLog(
        List<Long> versions,
        Map<Long, String> appendByVersion,
        Map<String, Integer> commits,
        Map<String, Long> rows,
        List<String> dataFiles,
        List<String> missingFiles) {

    /** Reads the log of the table at {@code root} with configuration {@code c}. */
    static RaceLog read(Configuration c, Path root) throws IOException {
        VendedLogStore store = new VendedLogStore(c);
        List<Long> versions = new ArrayList<>();
        Map<Long, String> appendByVersion = new LinkedHashMap<>();
        Map<String, Integer> commits = new LinkedHashMap<>();
        Map<String, Long> rows = new LinkedHashMap<>();
        List<String> dataFiles = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        for (var it = store.listFrom(LogStoreContract.version(root, 0), c); it.hasNext(); ) {
            FileStatus s = it.next();
            String name = s.getPath().getName();
            if (!name.matches("\\d{20}\\.json")) {
                continue;
            }
            long version = Long.parseLong(name.substring(0, 20));
            versions.add(version);
            String tag = null;
            long added = 0;
            for (String line : LogStoreContract.lines(store, s.getPath(), c)) {
                JsonNode action = json.readTree(line);
                JsonNode info = action.path("commitInfo");
                if (info.has("userMetadata")) {
                    tag = info.get("userMetadata").asText();
                }
                JsonNode add = action.path("add");
                if (add.has("path")) {
                    added += json.readTree(add.get("stats").asText()).get("numRecords").asLong();
                    dataFiles.add(add.get("path").asText());
                }
            }
            appendByVersion.put(version, tag);
            if (tag != null) {
                commits.merge(tag, 1, Integer::sum);
                rows.merge(tag, added, Long::sum);
            }
        }
        FileSystem fs = root.getFileSystem(c);
        List<String> missing = new ArrayList<>();
        for (String f : dataFiles) {
            try {
                if (fs.getFileStatus(new Path(root, f)).getLen() <= 0) {
                    missing.add(f);
                }
            } catch (FileNotFoundException e) {
                missing.add(f);
            }
        }
        return new RaceLog(versions, appendByVersion, commits, rows, dataFiles, missing);
    }

    /** The rows of every append in the log. */
    long totalRows() {
        return rows.values().stream().mapToLong(Long::longValue).sum();
    }

    /** {@code 0, 1, ..., last}. */
    static List<Long> upTo(long last) {
        List<Long> out = new ArrayList<>();
        for (long v = 0; v <= last; v++) {
            out.add(v);
        }
        return out;
    }
}
