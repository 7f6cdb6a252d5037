package io.lvmqos.volume;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities ("50Mi", "1G", "2k", "1.5", "1e3"), the notation operators
 * already use in StorageClasses, parsed to an exact decimal.
 */
public final class Quantity {

    private static final Pattern FORMAT =
            Pattern.compile("^([+]?[0-9]+(?:\\.[0-9]*)?|[+]?\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m|[eE][+-]?[0-9]{1,3})?$");
    private static final Map<String, BigDecimal> SUFFIXES = Map.ofEntries(
            Map.entry("Ki", BigDecimal.valueOf(1L << 10)),
            Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
            Map.entry("Gi", BigDecimal.valueOf(1L << 30)),
            Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
            Map.entry("Pi", BigDecimal.valueOf(1L << 50)),
            Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
            Map.entry("k", BigDecimal.TEN.pow(3)),
            Map.entry("M", BigDecimal.TEN.pow(6)),
            Map.entry("G", BigDecimal.TEN.pow(9)),
            Map.entry("T", BigDecimal.TEN.pow(12)),
            Map.entry("P", BigDecimal.TEN.pow(15)),
            Map.entry("E", BigDecimal.TEN.pow(18)),
            Map.entry("m", new BigDecimal("0.001")));

    private Quantity() {
    }

    /** The quantity's exact value, or empty when the text is not a non-negative quantity. */
    public static Optional<BigDecimal> parse(String text) {
        Matcher matcher = FORMAT.matcher(text.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        BigDecimal number = new BigDecimal(matcher.group(1).replace("+", ""));
        String suffix = matcher.group(2);
        if (suffix == null) {
            return Optional.of(number);
        }
        if (suffix.length() > 1 && (suffix.charAt(0) == 'e' || suffix.charAt(0) == 'E') && suffix.charAt(1) != 'i') {
            int exponent = Integer.parseInt(suffix.substring(1));
            if (Math.abs(exponent) > 30) {
                return Optional.empty();
            }
            return Optional.of(number.scaleByPowerOfTen(exponent));
        }
        return Optional.of(number.multiply(SUFFIXES.get(suffix)));
    }
}
