package io.lvmqos.e2e.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Dockerfile read into stages of instructions: comments dropped, continuation lines joined,
 * heredocs ({@code COPY <<'EOF' path}) kept as the instruction's body. Enough to check its
 * structure without a Docker engine.
 */
final class DockerfileText {

    record Instruction(String keyword, String arguments, String heredoc) {
        /** The named flag of COPY/FROM/RUN, e.g. {@code --from}. */
        Optional<String> option(String name) {
            Matcher matcher = Pattern.compile("(?:^|\\s)" + Pattern.quote(name) + "=(\\S+)").matcher(arguments);
            return matcher.find() ? Optional.of(matcher.group(1)) : Optional.empty();
        }

        /** The words after the options, e.g. the sources and destination of COPY. */
        List<String> words() {
            List<String> words = new ArrayList<>();
            for (String word : arguments.split("\\s+")) {
                if (!word.isEmpty() && !word.startsWith("--") && !word.startsWith("<<")) {
                    words.add(word);
                }
            }
            return words;
        }
    }

    record Stage(String image, Optional<String> name, List<Instruction> instructions) {
        List<Instruction> all(String keyword) {
            return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
        }

        String runText() {
            return String.join("\n", all("RUN").stream().map(Instruction::arguments).toList());
        }
    }

    private static final Pattern HEREDOC = Pattern.compile("<<-?['\"]?([A-Za-z_]+)['\"]?");

    final List<Stage> stages;

    private DockerfileText(List<Stage> stages) {
        this.stages = List.copyOf(stages);
    }

    static DockerfileText read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<Stage> stages = new ArrayList<>();
        List<Instruction> current = null;
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i++);
            String stripped = line.strip();
            if (stripped.isEmpty() || stripped.startsWith("#")) {
                continue;
            }
            StringBuilder logical = new StringBuilder(stripped);
            while (logical.toString().endsWith("\\") && i < lines.size()) {
                logical.setLength(logical.length() - 1);
                String next = lines.get(i++).strip();
                if (!next.startsWith("#")) {
                    logical.append(' ').append(next);
                }
            }
            String text = logical.toString().strip();
            int space = text.indexOf(' ');
            String keyword = (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT);
            String arguments = space < 0 ? "" : text.substring(space + 1).strip();
            String heredoc = null;
            Matcher matcher = HEREDOC.matcher(arguments);
            if (!keyword.equals("RUN") && matcher.find()) {
                String end = matcher.group(1);
                StringBuilder body = new StringBuilder();
                while (i < lines.size() && !lines.get(i).strip().equals(end)) {
                    body.append(lines.get(i++)).append('\n');
                }
                i++;
                heredoc = body.toString();
            }
            if (keyword.equals("FROM")) {
                String[] words = arguments.split("\\s+");
                String image = words[0].startsWith("--") && words.length > 1 ? words[1] : words[0];
                Optional<String> name = Optional.empty();
                for (int w = 0; w + 1 < words.length; w++) {
                    if (words[w].equalsIgnoreCase("AS")) {
                        name = Optional.of(words[w + 1]);
                    }
                }
                current = new ArrayList<>();
                stages.add(new Stage(image, name, current));
            } else if (current != null) {
                current.add(new Instruction(keyword, arguments, heredoc));
            }
        }
        return new DockerfileText(stages);
    }

    Stage last() {
        return stages.getLast();
    }

    Stage stage(String name) {
        return stages.stream().filter(s -> s.name().equals(Optional.of(name))).findFirst()
                .orElseThrow(() -> new AssertionError("no stage named " + name));
    }
}
