package dev.vended.storage.delta.spark;

import dev.vended.storage.delta.spark.FileRecordingIssuer.Call;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Looks for vended credentials in configuration entries without holding them: an access key id
 * is looked for as text, a secret or session token by the SHA-256 of every substring of its
 * length ({@link FileRecordingIssuer} records lengths and digests only).
 */
final class CredentialScan {

    private CredentialScan() {}

    /**
     * The entries in which a credential of {@code calls} appears, in their names or values.
     *
     * @param entries name to value (the names say where each entry comes from)
     * @param calls the provider calls, with the digests of what they returned
     * @return "{@code <name>: <what>}" per hit (never the value); empty if none
     */
    static List<String> hits(Map<String, String> entries, List<Call> calls) {
        Set<String> digests = new HashSet<>();
        Set<Integer> lengths = new TreeSet<>();
        for (Call c : calls) {
            digests.add(c.secretSha());
            lengths.add(c.secretLength());
            if (c.tokenLength() > 0) {
                digests.add(c.tokenSha());
                lengths.add(c.tokenLength());
            }
        }
        List<String> hits = new ArrayList<>();
        for (Map.Entry<String, String> e : entries.entrySet()) {
            for (String text : new String[] {e.getKey(), e.getValue() == null ? "" : e.getValue()}) {
                for (Call c : calls) {
                    if (text.contains(c.accessKeyId())) {
                        hits.add(e.getKey() + ": access key id " + c.accessKeyId());
                    }
                }
                for (int n : lengths) {
                    for (int i = 0; i + n <= text.length(); i++) {
                        if (digests.contains(FileRecordingIssuer.sha256(text.substring(i, i + n)))) {
                            hits.add(e.getKey() + ": a secret or session token (" + n + " characters)");
                        }
                    }
                }
            }
        }
        return hits;
    }
}
