//! Sections -> chunks: greedy packing of whole blocks under the cap.

use super::{Block, Chunk, ChunkOptions, Section};

pub(crate) fn pack(
    source: &str,
    text: &str,
    sections: &[Section],
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for section in sections {
        let mut open: Option<Open> = None;
        for piece in section
            .blocks
            .iter()
            .flat_map(|b| cut(text, *b, opts.max_bytes))
        {
            let piece_text = normalize_newlines(&text[piece.start..piece.end]);
            if let Some(o) = open.as_mut() {
                let gap = &text[o.end..piece.start];
                let sep = if gap.trim().is_empty() {
                    normalize_newlines(gap)
                } else {
                    "\n\n".to_string()
                };
                if o.text.len() + sep.len() + piece_text.len() <= opts.max_bytes {
                    o.text.push_str(&sep);
                    o.text.push_str(&piece_text);
                    o.end = piece.end;
                    continue;
                }
                chunks.push(finish(source, &section.breadcrumb, open.take().unwrap()));
            }
            open = Some(Open {
                start: piece.start,
                end: piece.end,
                text: piece_text,
            });
        }
        if let Some(o) = open {
            chunks.push(finish(source, &section.breadcrumb, o));
        }
    }
    chunks
}

struct Open {
    start: usize,
    end: usize,
    text: String,
}

fn finish(source: &str, breadcrumb: &str, o: Open) -> Chunk {
    Chunk {
        source: source.to_string(),
        breadcrumb: breadcrumb.to_string(),
        start: o.start,
        end: o.end,
        content: format!("{breadcrumb}\n\n{}", o.text),
        text: o.text,
    }
}

/// A block that fits is one piece. One over the cap is cut between lines, and a line over the
/// cap between characters; pieces that are only white space are dropped.
fn cut(text: &str, block: Block, max: usize) -> Vec<Block> {
    if block.end - block.start <= max {
        return vec![block];
    }
    let mut pieces = Vec::new();
    let mut start = block.start; // start of the open piece
    let mut pos = block.start; // start of the current line
    for line in text[block.start..block.end].split_inclusive('\n') {
        let line_end = pos + line.len();
        if line_end - start > max && pos > start {
            push_trimmed(text, &mut pieces, start, pos);
            start = pos;
        }
        // The line alone is over the cap: cut it after the last white space that fits (in
        // the window's second half), else at the last char boundary that fits.
        while line_end - start > max {
            let mut cut_at = start + max;
            while !text.is_char_boundary(cut_at) {
                cut_at -= 1;
            }
            // After the white space character, whatever its width (U+3000, U+0085: found by
            // fuzzing, `+ 1` cut inside them).
            if let Some((ws, c)) = text[start..cut_at]
                .char_indices()
                .rfind(|(_, c)| c.is_whitespace())
            {
                if ws >= max / 2 {
                    cut_at = start + ws + c.len_utf8();
                }
            }
            push_trimmed(text, &mut pieces, start, cut_at);
            start = cut_at;
        }
        pos = line_end;
    }
    push_trimmed(text, &mut pieces, start, pos);
    pieces
}

fn push_trimmed(text: &str, pieces: &mut Vec<Block>, start: usize, end: usize) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start_matches(['\r', '\n']).len();
    let trimmed_end = start + slice.trim_end().len();
    if trimmed_end > start + lead {
        pieces.push(Block {
            start: start + lead,
            end: trimmed_end,
        });
    }
}

fn normalize_newlines(s: &str) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_cut_on_char_boundaries() {
        let text = "é".repeat(100);
        let pieces = cut(
            &text,
            Block {
                start: 0,
                end: text.len(),
            },
            65,
        );
        assert!(pieces.iter().all(|p| p.end - p.start <= 65));
        assert_eq!(pieces.first().unwrap().start, 0);
        assert_eq!(pieces.last().unwrap().end, text.len());
        for w in pieces.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
    }

    #[test]
    fn blocks_cut_between_lines() {
        let text = "aaaa\nbbbb\ncccc\n";
        let pieces = cut(text, Block { start: 0, end: 14 }, 10);
        let got: Vec<&str> = pieces.iter().map(|p| &text[p.start..p.end]).collect();
        assert_eq!(got, ["aaaa\nbbbb", "cccc"]);
    }
}
