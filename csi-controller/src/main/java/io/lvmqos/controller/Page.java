package io.lvmqos.controller;

import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.ManagedVolume;
import java.util.List;

/**
 * One page of a listing in id order. The token is the id of the first entry of the next page,
 * so a page stays correct when volumes are added or removed between calls.
 */
record Page<T>(List<T> items, String nextToken) {

    static Page<ManagedVolume> of(List<ManagedVolume> sorted, int maxEntries, String startingToken) {
        if (maxEntries < 0) {
            throw DriverException.invalidArgument("max_entries must not be negative: " + maxEntries);
        }
        int start = 0;
        if (!startingToken.isEmpty()) {
            if (!startingToken.startsWith("lvmqos")) {
                throw DriverException.aborted("starting_token \"" + startingToken + "\" was not issued by this driver");
            }
            while (start < sorted.size() && sorted.get(start).id().toString().compareTo(startingToken) < 0) {
                start++;
            }
        }
        int end = maxEntries == 0 ? sorted.size() : Math.min(sorted.size(), start + maxEntries);
        String next = end < sorted.size() ? sorted.get(end).id().toString() : "";
        return new Page<>(sorted.subList(start, end), next);
    }
}
