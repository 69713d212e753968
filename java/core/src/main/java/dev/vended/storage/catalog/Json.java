package dev.vended.storage.catalog;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict, minimal JSON reader and writer for catalog answers (no dependency). Objects become
 * {@code LinkedHashMap<String, Object>}, arrays {@code List<Object>}, numbers {@link Number} as
 * {@code java.math.BigDecimal}, plus {@code String}, {@code Boolean} and {@code null}.
 */
final class Json {

    /** Thrown for malformed JSON; its message names the position, never quotes the text. */
    static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String message) {
            super(message);
        }
    }

    private static final int MAX_DEPTH = 64;

    private final String s;
    private int i;
    private int depth;

    private Json(String s) {
        this.s = s;
    }

    /**
     * Parses one JSON document.
     *
     * @param text the JSON text
     * @return the value
     * @throws ParseException on malformed input
     */
    static Object parse(String text) throws ParseException {
        Json p = new Json(text);
        p.ws();
        Object v = p.value();
        p.ws();
        if (p.i != p.s.length()) {
            throw p.error("trailing characters");
        }
        return v;
    }

    /** The JSON type name of a parsed value, for messages. */
    static String typeOf(Object v) {
        if (v == null) {
            return "null";
        } else if (v instanceof Map) {
            return "object";
        } else if (v instanceof List) {
            return "array";
        } else if (v instanceof String) {
            return "string";
        } else if (v instanceof Boolean) {
            return "boolean";
        } else {
            return "number";
        }
    }

    /** A JSON string literal for {@code value}. */
    static String quote(String value) {
        StringBuilder b = new StringBuilder(value.length() + 2).append('"');
        for (int k = 0; k < value.length(); k++) {
            char c = value.charAt(k);
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    /** A JSON array of strings. */
    static String stringArray(Collection<String> values) {
        StringBuilder b = new StringBuilder("[");
        for (String v : values) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(quote(v));
        }
        return b.append(']').toString();
    }

    private ParseException error(String what) {
        return new ParseException(what + " at offset " + i);
    }

    private void ws() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
            } else {
                break;
            }
        }
    }

    private Object value() throws ParseException {
        if (i >= s.length()) {
            throw error("unexpected end");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character");
        }
    }

    private void enter() throws ParseException {
        if (++depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
    }

    private Map<String, Object> object() throws ParseException {
        enter();
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        ws();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            depth--;
            return m;
        }
        while (true) {
            ws();
            if (i >= s.length() || s.charAt(i) != '"') {
                throw error("expected a member name");
            }
            String key = string();
            ws();
            expect(':');
            ws();
            m.put(key, value());
            ws();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                continue;
            }
            expect('}');
            depth--;
            return m;
        }
    }

    private List<Object> array() throws ParseException {
        enter();
        List<Object> a = new ArrayList<>();
        i++;
        ws();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            depth--;
            return a;
        }
        while (true) {
            ws();
            a.add(value());
            ws();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                continue;
            }
            expect(']');
            depth--;
            return a;
        }
    }

    private void expect(char c) throws ParseException {
        if (i >= s.length() || s.charAt(i) != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private String string() throws ParseException {
        i++;
        StringBuilder b = new StringBuilder();
        while (true) {
            if (i >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c < 0x20) {
                throw error("control character in string");
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw error("unterminated escape");
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    b.append(e);
                    break;
                case 'b':
                    b.append('\b');
                    break;
                case 'f':
                    b.append('\f');
                    break;
                case 'n':
                    b.append('\n');
                    break;
                case 'r':
                    b.append('\r');
                    break;
                case 't':
                    b.append('\t');
                    break;
                case 'u':
                    if (i + 4 > s.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    i += 4;
                    break;
                default:
                    throw error("bad escape");
            }
        }
    }

    private Object literal(String word, Object value) throws ParseException {
        if (!s.startsWith(word, i)) {
            throw error("unexpected literal");
        }
        i += word.length();
        return value;
    }

    private Number number() throws ParseException {
        int start = i;
        if (s.charAt(i) == '-') {
            i++;
        }
        while (i < s.length() && "0123456789.eE+-".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        try {
            return new java.math.BigDecimal(s.substring(start, i));
        } catch (NumberFormatException e) {
            i = start;
            throw error("bad number");
        }
    }
}
