package io.lvmqos.metadata;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the XML that thin_delta and thin_dump print, one element per line, without building a
 * document: a delta of a 10 GiB volume can have hundreds of thousands of lines, and each is turned
 * into a {@link ChunkRange} and handed on as it is read.
 *
 * <p>thin_delta prints, inside {@code <diff>}, {@code <different>}, {@code <left_only>} and
 * {@code <right_only>} runs (and {@code <same>} only with --verbose, which is not used): every kind
 * is a chunk that the two devices do not share, so every one of them is a change. thin_dump prints a
 * device's mappings as {@code <single_mapping origin_block=…>} and
 * {@code <range_mapping origin_begin=… length=…>}; the origin side is the device's own block.
 */
final class ThinToolsXml {

    private static final Pattern ELEMENT = Pattern.compile("^\\s*<([a-z_]+)\\s([^>]*?)/?>\\s*$");
    private static final Pattern ATTRIBUTE = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");

    private ThinToolsXml() {
    }

    /** The changed run on one line of thin_delta's output, if the line is one. */
    static Optional<ChunkRange> deltaRange(String line) {
        return element(line).flatMap(e -> switch (e.name()) {
            case "different", "left_only", "right_only" ->
                    Optional.of(new ChunkRange(number(e, "begin"), number(e, "length")));
            default -> Optional.empty();
        });
    }

    /** The mapped run on one line of thin_dump's output, if the line is one. */
    static Optional<ChunkRange> mappedRange(String line) {
        return element(line).flatMap(e -> switch (e.name()) {
            case "single_mapping" -> Optional.of(new ChunkRange(number(e, "origin_block"), 1));
            case "range_mapping" -> Optional.of(new ChunkRange(number(e, "origin_begin"), number(e, "length")));
            default -> Optional.empty();
        });
    }

    /** The pool's block size in 512-byte sectors, from the {@code <superblock>} line. */
    static Optional<Long> dataBlockSectors(String line) {
        return element(line).filter(e -> e.name().equals("superblock")).map(e -> number(e, "data_block_size"));
    }

    private record Element(String name, Map<String, String> attributes) {
    }

    private static Optional<Element> element(String line) {
        Matcher matcher = ELEMENT.matcher(line);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        Map<String, String> attributes = new HashMap<>();
        Matcher attribute = ATTRIBUTE.matcher(matcher.group(2));
        while (attribute.find()) {
            attributes.put(attribute.group(1), attribute.group(2));
        }
        return Optional.of(new Element(matcher.group(1), attributes));
    }

    private static long number(Element element, String attribute) {
        String value = element.attributes().get(attribute);
        if (value == null) {
            throw new IllegalArgumentException("<" + element.name() + "> without " + attribute);
        }
        return Long.parseLong(value);
    }
}
