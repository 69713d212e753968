package com.example.orders;

import java.io.IOException;
import java.util.Map;

/** Stands for your catalog client: whatever you call to get a table's short-lived credentials. */
public interface CatalogClient {

    /**
     * Loads a table's storage options.
     *
     * @param table the table, e.g. {@code db.orders}
     * @return credentials as storage options ({@code aws_access_key_id}, {@code
     *     aws_secret_access_key}, {@code aws_session_token}) plus {@code expires_at_millis}, epoch
     *     milliseconds as a decimal string
     * @throws IOException if the catalog cannot be reached or refuses
     */
    Map<String, String> loadCredentials(String table) throws IOException;
}
