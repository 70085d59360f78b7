//! Markdown -> sections, with pulldown-cmark's offset iterator: the parser decides what is a
//! heading, a code fence or a table, so `#` lines inside fences are never taken for headings.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::{file_name, Block, Section, BREADCRUMB_SEPARATOR};

pub(crate) fn sections(source: &str, text: &str) -> Vec<Section> {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut headings: Vec<(HeadingLevel, String)> = Vec::new();
    let mut title: Option<String> = None;
    let mut preamble = Vec::new();
    let mut out: Vec<Section> = Vec::new();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let mut in_front_matter = false;
    let mut depth = 0usize;

    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    match tag {
                        Tag::Heading { level, .. } => heading = Some((level, String::new())),
                        Tag::MetadataBlock(_) => in_front_matter = true,
                        Tag::HtmlBlock if is_html_comment(&text[range.clone()]) => {}
                        // A paragraph of only non-ASCII white space (U+00A0, U+3000, U+0085:
                        // text to CommonMark) trims to nothing: no block, no empty chunk (found
                        // by fuzzing).
                        _ => {
                            let end = range.start + text[range.clone()].trim_end().len();
                            if end > range.start {
                                let block = Block {
                                    start: range.start,
                                    end,
                                };
                                match out.last_mut() {
                                    Some(section) => section.blocks.push(block),
                                    None => preamble.push(block),
                                }
                            }
                        }
                    }
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if depth > 0 {
                    continue;
                }
                match end {
                    TagEnd::Heading(_) => {
                        if let Some((level, raw)) = heading.take() {
                            let name = collapse_whitespace(&raw);
                            while headings.last().is_some_and(|(l, _)| *l >= level) {
                                headings.pop();
                            }
                            if !name.is_empty() {
                                headings.push((level, name));
                            }
                            out.push(Section {
                                breadcrumb: breadcrumb(&headings, source),
                                blocks: Vec::new(),
                            });
                        }
                    }
                    TagEnd::MetadataBlock(_) => in_front_matter = false,
                    _ => {}
                }
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                if let Some((_, raw)) = heading.as_mut() {
                    raw.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak if heading.is_some() => {
                if let Some((_, raw)) = heading.as_mut() {
                    raw.push(' ');
                }
            }
            Event::Text(t) if in_front_matter => title = title.or_else(|| front_matter_title(&t)),
            Event::Rule if depth == 0 => {}
            _ => {}
        }
    }

    let preamble_crumb = title.unwrap_or_else(|| file_name(source).to_string());
    let mut all = Vec::with_capacity(out.len() + 1);
    all.push(Section {
        breadcrumb: preamble_crumb,
        blocks: preamble,
    });
    all.extend(out);
    all.retain(|s| !s.blocks.is_empty());
    all
}

fn breadcrumb(headings: &[(HeadingLevel, String)], source: &str) -> String {
    if headings.is_empty() {
        return file_name(source).to_string();
    }
    let names: Vec<&str> = headings.iter().map(|(_, n)| n.as_str()).collect();
    names.join(BREADCRUMB_SEPARATOR)
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An HTML block that is only a comment is invisible when rendered (Node's docs keep their
/// version history in `<!-- YAML ... -->` blocks), so it is not searchable content.
fn is_html_comment(block: &str) -> bool {
    let b = block.trim();
    b.starts_with("<!--")
        && b.ends_with("-->")
        && b[4..].find("-->").map(|i| i + 7) == Some(b.len())
}

/// `title: Something` in YAML front matter (quotes removed); nothing fancier is needed.
fn front_matter_title(yaml: &str) -> Option<String> {
    yaml.lines().find_map(|line| {
        let value = line.strip_prefix("title:")?.trim();
        let value = value.trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crumbs(md: &str) -> Vec<String> {
        sections("doc.md", md)
            .into_iter()
            .map(|s| s.breadcrumb)
            .collect()
    }

    #[test]
    fn heading_path() {
        let md = "# Guide\n\nintro\n\n## Setup\n\ns\n\n### Postgres\n\np\n\n## Use\n\nu\n";
        assert_eq!(
            crumbs(md),
            [
                "Guide",
                "Guide > Setup",
                "Guide > Setup > Postgres",
                "Guide > Use"
            ]
        );
    }

    #[test]
    fn markup_is_removed_from_headings() {
        let md = "## `fs.mkdtemp(prefix[, options])` and *more*\n\nbody\n";
        assert_eq!(crumbs(md), ["fs.mkdtemp(prefix[, options]) and more"]);
    }

    #[test]
    fn hash_lines_in_fences_are_not_headings() {
        let md = "# A\n\n```sh\n# not a heading\n```\n";
        assert_eq!(crumbs(md), ["A"]);
    }

    #[test]
    fn preamble_uses_front_matter_title_or_file_name() {
        assert_eq!(
            crumbs("---\ntitle: \"My Notes\"\n---\nhello\n\n# H\n\nx\n"),
            ["My Notes", "H"]
        );
        assert_eq!(crumbs("hello\n\n# H\n\nx\n"), ["doc.md", "H"]);
    }

    #[test]
    fn comments_are_skipped_and_empty_sections_dropped() {
        let md = "# A\n\n<!-- YAML\nadded: v1\n-->\n\n## B\n\n<!-- x -->\n\nbody\n";
        let s = sections("doc.md", md);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].breadcrumb, "A > B");
        assert_eq!(s[0].blocks.len(), 1);
    }
}
