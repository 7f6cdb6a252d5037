package io.lvmqos.volume;

import java.util.regex.Pattern;

/** Node ids are Kubernetes node names: DNS subdomains. They become part of volume ids and topology. */
public final class NodeIds {

    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    private NodeIds() {
    }

    public static boolean isValid(String node) {
        return DNS_SUBDOMAIN.matcher(node).matches();
    }
}
