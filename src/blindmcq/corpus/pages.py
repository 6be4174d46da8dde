"""Pages parsed once for both extraction paths, with a leaner conversion of pdfminer's layout objects.

pdfplumber turns every layout object into a dict by calling ``resolve_all`` on each attribute and decoding
each char's colour-space name afresh; on the Commission's pages that conversion cost as much CPU as
pdfminer's own interpretation of the page. :class:`LeanPage` builds the same dicts (same keys, equal
values: ``tests/corpus/test_pages.py`` compares them with pdfplumber's on rendered pages) but resolves
only values that can hold PDF references, and decodes each colour-space name once.

Costs of pdfminer's own reading are cut too, the results unchanged (the same tests compare them): the
content stream's common tokens (numbers, operators, names, plain strings) are read by one regular
expression each instead of pdfminer's per-character state machine, a literal string's octal escapes
decoded in one step (:class:`_ContentParser`); the interpreter reads runs of plain operands and operators
itself, without the parser's object stack (:meth:`_Interpreter._run`); each plain char's dict, and each
plain straight line's, is built as it is printed, not from an ``LTChar`` or ``LTLine`` afterwards
(:class:`_CharDevice`).

Both paths read the same :class:`LeanPage` (one parse per page); what they conclude stays independent:
path 1 finds tables with pdfplumber's table finder and reads cell chars, path 2 builds its own grid from
the ruling edges and reads words.
"""

from __future__ import annotations

import itertools
import re
from binascii import unhexlify
from codecs import escape_decode  # type: ignore[attr-defined]
from collections import Counter
from collections.abc import Iterator
from math import isfinite
from operator import itemgetter
from typing import Any
from unicodedata import normalize as normalize_unicode

from pdfminer import pdfinterp, settings
from pdfminer.layout import LTChar, LTContainer, LTCurve, LTItem, LTLine, LTTextContainer
from pdfminer.pdffont import PDFFont, PDFUnicodeNotDefined
from pdfminer.pdftypes import stream_value
from pdfminer.psparser import HEX_PAIR, KWD, LIT, PSEOF, SPC, PSBaseParser, PSKeyword, keyword_name
from pdfminer.utils import get_bound
from pdfplumber.page import ALL_ATTRS, Page, PDFPageAggregatorWithMarkedContent
from pdfplumber.utils import resolve_all, resolve_and_decode
from pdfplumber.utils.exceptions import PdfminerException

_PLAIN = frozenset({float, int, str, bool, type(None)})
_NUMBERS = frozenset({float, int})
_KINDS: dict[type, str] = {}
# pdfminer's LTChar attributes, in order, once pdfplumber has tagged it (mcid, tag)
_CHAR_FIELDS = (
    "_text", "matrix", "fontname", "ncs", "graphicstate", "adv", "upright",
    "x0", "y0", "x1", "y1", "width", "height", "bbox", "size", "mcid", "tag",
)  # fmt: skip
_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}  # an object's attribute names -> those pdfplumber keeps
_CS_NAMES: dict[Any, Any] = {}


def _kind(cls: type) -> str:
    kind = _KINDS.get(cls)
    if kind is None:
        name = cls.__name__
        kind = _KINDS[cls] = (name[2:] if name.startswith("LT") else name).lower()
    return kind


def _attrs(obj: LTItem) -> dict[str, Any]:
    """pdfplumber's attributes of ``obj``, ``resolve_all`` applied only where a value can hold a reference
    (not to numbers, strings, or tuples of them)."""
    d = obj.__dict__
    sig = tuple(d)
    keys = _KEYS.get(sig)
    if keys is None:
        keys = _KEYS[sig] = tuple(k for k in sig if k in ALL_ATTRS)
    attr = {k: d[k] for k in keys}
    for k, v in attr.items():
        t = type(v)
        if t in _PLAIN or (t is tuple and _PLAIN.issuperset(map(type, v))):
            continue
        if t is list and all(type(x) is tuple and _PLAIN.issuperset(map(type, x)) for x in v):
            attr[k] = list(v)  # points: a new list, as resolve_all gives, of the same (immutable) tuples
        else:
            attr[k] = resolve_all(v)
    return attr


def _cs_name(name: Any) -> Any:
    if isinstance(name, str | bytes):
        if name not in _CS_NAMES:
            _CS_NAMES[name] = resolve_and_decode(name)
        return _CS_NAMES[name]
    return resolve_and_decode(name)


# A literal string's plain bytes and complete octal escapes (\\ddd below 256; \\d or \\dd followed, in the
# same buffer, by a byte that is no digit). Every other escape, and an escape the buffer may cut, is left to
# pdfminer's own state machine.
_STRING_RUN = re.compile(rb"(?:[^()\\]+|\\[0-3][0-7][0-7]|\\[0-7]{1,2}(?=[^0-7]))*")


# One common token after optional white space (``\s`` of a bytes pattern, pdfminer's own): a number (an
# optional sign, digits, at most one point, a digit at least: what pdfminer's number states read), an
# operator (a letter, then up to pdfminer's keyword delimiters), a name without ``#`` escapes, a literal
# string of plain bytes and three-digit octal escapes with no parenthesis inside, a hex string of hex digits
# only. A number, operator or name ends at the first byte that ends it in pdfminer too; a match that runs
# to the buffer's end (the token may go on in the next buffer), a name followed by ``#``, a hex string
# followed by ``>``, and every other token are left to pdfminer's state machine.
_DELIMS = rb"#/%\[\]()<>{}\s"
_TOKEN = re.compile(
    rb"\s*(?:"
    rb"(?P<num>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    rb"|(?P<kw>[A-Za-z][^" + _DELIMS + rb"]*)"
    rb"|/(?P<lit>[^" + _DELIMS + rb"]*)"
    rb"|\((?P<str>(?:[^()\\]|\\[0-3][0-7][0-7])*)\)"
    rb"|<(?P<hex>[0-9a-fA-F]*)>"
    rb")"
)
# The same tokens, and an array's brackets, for the interpreter's run of plain tokens (``_Interpreter._run``)
_RUN_TOKEN = re.compile(_TOKEN.pattern[:-1] + rb"|(?P<open>\[)|(?P<close>\])" + rb")")
_MAIN = PSBaseParser._parse_main
_OWN = (KWD(b"BI"), KWD(b"ID"))  # operators the content parser treats itself (inline images)
_HASH, _GT = ord("#"), ord(">")


def _hex(digits: bytes) -> bytes:
    if len(digits) % 2 == 0:
        return unhexlify(digits)
    return HEX_PAIR.sub(lambda m: bytes((int(m.group(0), 16),)), SPC.sub(b"", digits))  # pdfminer's


class _ContentParser(pdfinterp.PDFContentParser):
    """pdfminer's content-stream parser, its common tokens read by one regular expression (``_TOKEN``) and a
    literal string's run of plain bytes and octal escapes in one step. The stock parser takes a turn of its
    token loop per token state and five per octal escape (fonts embedded as subsets, reportlab's and many
    office exporters', print every glyph as one): the larger part of a page's reading. The tokens and
    objects are the stock parser's, at the same positions (``tests/corpus/test_pages.py`` compares them
    on generated streams, cut by buffers of every size)."""

    def _fast_token(self) -> tuple[int, Any] | None:
        """The next token and its position, when it is one ``_TOKEN`` reads whole in the buffer; else None,
        the parser's state untouched."""
        if self.eof or self._tokens or self._parse1.__func__ is not _MAIN:  # type: ignore[attr-defined]
            return None
        buf = self.buf
        m = _TOKEN.match(buf, self.charpos)
        if m is None:
            return None
        end, kind = m.end(), m.lastgroup
        if kind == "num":
            if end >= len(buf):
                return None
            text = m.group(kind)
            token: Any = float(text) if b"." in text else int(text)
        elif kind == "kw":
            if end >= len(buf):
                return None
            text = m.group(kind)
            token = True if text == b"true" else False if text == b"false" else KWD(text)
            if token in _OWN:
                return None
        elif kind == "lit":
            if end >= len(buf) or buf[end] == _HASH:
                return None
            text = m.group(kind)
            try:
                name: str | bytes = str(text, "utf-8")
            except UnicodeDecodeError:
                name = text
            token = LIT(name)
        elif kind == "str":
            token = escape_decode(m.group(kind))[0]
        else:
            if end >= len(buf) or buf[end] == _GT:  # pdfminer reads ``>>`` after a hex string's digits
                return None
            token = _hex(m.group(kind))
        self.charpos = end
        start = m.start(kind) if kind in ("num", "kw") else m.start(kind) - 1  # a name at its "/", ...
        return self.bufpos + start, token

    def nexttoken(self) -> tuple[int, Any]:
        return self._fast_token() or super().nexttoken()

    def nextobject(self) -> Any:
        # Outside arrays and dicts a plain token is the next object as it is (pdfminer pushes it and flushes
        # its stack at once); operators the parser treats itself are not read here (``_OWN``).
        if not self.results and not self.context and not self.curstack:
            found = self._fast_token()
            if found is not None:
                return found
        return super().nextobject()

    def _parse_string(self, s: bytes, i: int) -> int:
        j = _STRING_RUN.match(s, i).end()  # type: ignore[union-attr] (a run may be empty: always a match)
        if j > i:
            self._curtoken += escape_decode(s[i:j])[0]
        return super()._parse_string(s, j)


# (interpreter class, operator keyword) -> (the method, its argument count), or None where it has none
_OPS: dict[tuple[type, PSKeyword], tuple[Any, int] | None] = {}


class _Interpreter(pdfinterp.PDFPageInterpreter):
    """pdfminer's page interpreter, each operator's method and argument count looked up once per operator
    (pdfminer builds the method's name, and looks it up, at every operator of the stream); the operators run
    with the same arguments in the same order. Form XObjects are interpreted by this class too (pdfminer's
    ``dup``)."""

    def _op(self, obj: PSKeyword) -> tuple[Any, int] | None:
        key = (type(self), obj)
        if key not in _OPS:
            name = keyword_name(obj)
            method = "do_{}".format(name.replace("*", "_a").replace('"', "_w").replace("'", "_q"))
            func = getattr(type(self), method, None)
            _OPS[key] = None if func is None else (func, func.__code__.co_argcount - 1)
        return _OPS[key]

    def execute(self, streams: Any) -> None:
        # pdfminer's execute (circular content streams refused, an empty page left), its loop's lookups cached
        valid_streams = []
        self.stream_ids.clear()
        for obj in streams:
            stream = stream_value(obj)
            if stream.objid is None:
                pdfinterp.log.warning("Execute called on non-indirect object (inline image?) %r", stream)
                continue
            if stream.objid in self.parent_stream_ids:
                pdfinterp.log.warning(
                    "Refusing to execute circular reference to content stream %d", stream.objid
                )
            else:
                valid_streams.append(stream)
                self.stream_ids.add(stream.objid)
        try:
            parser = pdfinterp.PDFContentParser(valid_streams)  # the module's parser (swapped by LeanPage)
        except PSEOF:
            return
        nextobject, op = parser.nextobject, self._op
        fast = isinstance(parser, _ContentParser)
        while True:
            if (
                fast
                and not parser.eof
                and not parser._tokens
                and parser._parse1.__func__ is _MAIN  # type: ignore[attr-defined]
                and not parser.results
                and not parser.context
                and not parser.curstack
            ):
                self._run(parser)
            try:
                (_, obj) = nextobject()
            except PSEOF:
                break
            if isinstance(obj, PSKeyword):
                self._apply(op(obj), obj)
            else:
                self.push(obj)

    def _apply(self, found: tuple[Any, int] | None, keyword: PSKeyword) -> None:
        """Run an operator (``found``: its method and operand count, None if unknown) on the operands on
        the stack, as pdfminer does: with too few operands it is skipped."""
        if found is not None:
            func, nargs = found
            if nargs:
                args = self.pop(nargs)
                if len(args) == nargs:
                    func(self, *args)
            else:
                func(self)
        elif settings.STRICT:
            raise pdfinterp.PDFInterpreterError(f"Unknown operator: {keyword_name(keyword)!r}")

    def _run(self, parser: _ContentParser) -> None:
        """Read and execute the plain tokens that follow in the parser's buffer, as :meth:`execute` would
        with the parser's own ``nextobject``: operands (numbers, names, strings, arrays of those) pushed,
        operators run with the same arguments. It stops, the parser left at the first token not read, at
        whatever ``_RUN_TOKEN`` does not read whole in the buffer or that the parser treats otherwise (a
        comment, a dict, a nested array, an operator inside an array, an inline image, a token the
        buffer's end may cut): :meth:`execute` reads that one by the parser's ``nextobject``."""
        buf, pos = parser.buf, parser.charpos
        n, match, ops, names = len(buf), _RUN_TOKEN.match, _RUN_OPS.setdefault(type(self), {}), _RUN_NAMES
        array: list[Any] | None = None
        start = pos  # where the array being read began
        while True:
            m = match(buf, pos)
            if m is None:
                break
            kind, end = m.lastgroup, m.end()
            if kind == "num":
                if end >= n:
                    break
                text = m.group(kind)
                token: Any = float(text) if b"." in text else int(text)
            elif kind == "str":
                token = escape_decode(m.group(kind))[0]
            elif kind == "kw":
                if end >= n:
                    break
                text = m.group(kind)
                if text == b"true" or text == b"false":
                    token = text == b"true"
                else:
                    if array is not None:
                        break
                    found = ops.get(text, _UNSEEN)
                    if found is _UNSEEN:
                        kw = KWD(text)
                        found = ops[text] = _OWN_OP if kw in _OWN else (kw, self._op(kw))
                    if found is _OWN_OP:
                        break
                    pos = parser.charpos = end
                    self._apply(found[1], found[0])
                    continue
            elif kind == "lit":
                if end >= n or buf[end] == _HASH:
                    break
                text = m.group(kind)
                token = names.get(text)
                if token is None:
                    try:
                        name: str | bytes = str(text, "utf-8")
                    except UnicodeDecodeError:
                        name = text
                    token = names[text] = LIT(name)
            elif kind == "hex":
                if end >= n or buf[end] == _GT:  # pdfminer reads ``>>`` after a hex string's digits
                    break
                token = _hex(m.group(kind))
            elif kind == "open":
                if array is not None:
                    break
                array, start, pos = [], pos, end
                continue
            else:  # "]"
                if array is None:
                    break
                token, array = array, None
            pos = end
            if array is not None:
                array.append(token)
            else:
                self.argstack.append(token)
        parser.charpos = start if array is not None else pos


_UNSEEN, _OWN_OP = object(), object()
# (interpreter class) -> operator's bytes -> (keyword, (method, argument count) or None), or _OWN_OP
_RUN_OPS: dict[type, dict[bytes, Any]] = {}
_RUN_NAMES: dict[bytes, Any] = {}  # a name's bytes -> pdfminer's literal (LIT interns them alike)


class _CharDevice(PDFPageAggregatorWithMarkedContent):
    """pdfplumber's layout device, building each plain horizontal char's dict as it is printed.

    The dict is the one :meth:`LeanPage.parse_objects` would build from pdfminer's ``LTChar`` (the same
    arithmetic as ``LTChar.__init__``, in the same order, so the same floats), without the ``LTChar``.
    Chars that are not plain (a vertical font, a font name in bytes, an unusual colour space or tag) are
    pdfminer's ``LTChar`` as before. Either kind goes to :attr:`chars`, in print order, not to the layout
    tree: only used without layout analysis (``laparams`` None), where nothing else reads chars there.
    """

    def __init__(self, page: LeanPage) -> None:
        super().__init__(page.pdf.rsrcmgr, pageno=page.page_number, laparams=None)
        self.chars: list[dict[str, Any] | LTChar] = []
        self.mb_x0, self.mb_top = page.mediabox[:2]
        self.page_height, self.doctop, self.number = page.height, page.initial_doctop, page.page_number
        self.norm = page.pdf.unicode_norm
        # per font (keyed by the object, which PDFFont hashes by identity: the key holds it for the page, so
        # a font the resource manager does not cache, such as a direct font dict in a form's resources,
        # cannot be freed and its id reused by another): whether its chars can be built here, and its
        # descent; per (font, cid): the glyph's text and width. Both are pdfminer's own values, looked up
        # once instead of at every char.
        self._fonts: dict[PDFFont, tuple[bool, float]] = {}
        self._glyphs: dict[PDFFont, dict[int, tuple[str, float]]] = {}
        # the page's lines in print order: a plain line's dict (:meth:`paint_path`), else pdfminer's LTLine
        self.lines: list[dict[str, Any] | LTLine] = []
        self.mb_x0_y0 = page.mediabox[0], page.mediabox[1] + page.height  # pdfplumber's point2coord offsets
        self._painting = False

    def paint_path(self, gstate: Any, stroke: bool, fill: bool, evenodd: bool, path: Any) -> None:
        """pdfplumber's path painting, a plain straight line's dict built here (what
        :meth:`LeanPage.process_object` builds from pdfminer's ``LTLine``: the same floats by the same
        operations); other paths are pdfminer's, as before, their lines kept in :attr:`lines` in print
        order too. A line is plain when it is one ``m`` and one ``l`` segment, and the matrix, width,
        colours and marked-content tags are plain values."""
        if self._painting:  # a subpath of a path pdfminer splits (several ``m``): pdfminer's, in the tree
            super().paint_path(gstate, stroke, fill, evenodd, path)
            return
        ctm, width, scolor, ncolor = self.ctm, gstate.linewidth, gstate.scolor, gstate.ncolor
        mcid, tag = self.cur_mcid, self.cur_tag
        if (
            len(path) == 2
            and path[0][0] == "m"
            and path[1][0] == "l"
            and len(path[0]) == 3
            and len(path[1]) == 3
            and type(ctm) is tuple
            and len(ctm) == 6
            and _NUMBERS.issuperset(map(type, ctm))
            and _NUMBERS.issuperset((type(path[0][1]), type(path[0][2]), type(path[1][1]), type(path[1][2])))
            and type(width) in _PLAIN
            and (type(scolor) in _PLAIN or (type(scolor) is tuple and _PLAIN.issuperset(map(type, scolor))))
            and (type(ncolor) in _PLAIN or (type(ncolor) is tuple and _PLAIN.issuperset(map(type, ncolor))))
            and type(mcid) in _PLAIN
            and type(tag) in _PLAIN
        ):
            a, b, c, d, e, f = ctm
            (_, x, y), (_, u, v) = path
            pts = [(a * x + c * y + e, b * x + d * y + f), (a * u + c * v + e, b * u + d * v + f)]
            x0, y0, x1, y1 = get_bound(pts)
            x_off, y_off = self.mb_x0_y0
            p0, p1 = [(x_off + p[0], y_off - p[1]) for p in pts]
            height, mb_x0, mb_top = self.page_height, self.mb_x0, self.mb_top
            top = (height - y1) + mb_top
            self.lines.append(
                {
                    "x0": x0 + mb_x0 if mb_x0 != 0 else x0,
                    "y0": y0,
                    "x1": x1 + mb_x0 if mb_x0 != 0 else x1,
                    "y1": y1,
                    "width": x1 - x0,
                    "height": y1 - y0,
                    "pts": [p0, p1],
                    "linewidth": width,
                    "stroke": stroke,
                    "fill": fill,
                    "evenodd": evenodd,
                    "stroking_color": scolor,
                    "non_stroking_color": ncolor,
                    "mcid": mcid,
                    "tag": tag,
                    "object_type": "line",
                    "page_number": self.number,
                    "path": [("m", p0), ("l", p1)],
                    "dash": gstate.dash,
                    "top": top,
                    "bottom": (height - y0) + mb_top,
                    "doctop": self.doctop + top,
                }
            )
            return
        objs = self.cur_item._objs
        n = len(objs)
        self._painting = True
        try:
            super().paint_path(gstate, stroke, fill, evenodd, path)
        finally:
            self._painting = False
        added = objs[n:]  # moved after pdfplumber has tagged them (it tags the tree's last object)
        if any(type(o) is LTLine for o in added):
            self.lines += [o for o in added if type(o) is LTLine]
            objs[n:] = [o for o in added if type(o) is not LTLine]

    def render_string_horizontal(
        self,
        seq: Any,
        matrix: Any,
        pos: Any,
        font: Any,
        fontsize: float,
        scaling: float,
        charspace: float,
        wordspace: float,
        rise: float,
        dxscale: float,
        ncs: Any,
        graphicstate: Any,
    ) -> Any:
        """pdfminer's loop over a string's glyphs, each plain char's dict built in the loop: the values
        pdfminer's ``render_char`` and pdfplumber's char dict give for the matrix pdfminer's loop passes it,
        the same floats by the same operations, with what is the same for every glyph of the string computed
        once. A string whose font,
        tag, colour space or matrix is not plain, and a glyph whose position is not a plain number, go
        through :meth:`render_char` as in pdfminer's loop."""
        fontname, mcid, tag, name = font.fontname, self.cur_mcid, self.cur_tag, ncs.name
        known = self._known(font)
        if (
            not known[0]
            or type(mcid) not in _PLAIN
            or type(tag) not in _PLAIN
            or not isinstance(name, str | bytes)  # a colour space named otherwise is resolved at each char
            or type(matrix) is not tuple
            or len(matrix) != 6
            or not _NUMBERS.issuperset(map(type, matrix))
        ):
            return super().render_string_horizontal(
                seq, matrix, pos, font, fontsize, scaling, charspace, wordspace, rise, dxscale, ncs,
                graphicstate,
            )  # fmt: skip
        (x, y) = pos
        a, b, c, d, e, f = matrix
        yc, yd = y * c, y * d  # pdfminer's translate_matrix: x * a + y * c + e, x * b + y * d + f
        bx0 = 0
        by0 = known[1] * fontsize + rise  # descent + rise
        by1 = by0 + fontsize
        # the corners' terms that do not depend on the glyph (pdfminer's apply_matrix_rect, left to right)
        l1_, b1_ = a * bx0 + c * by0, b * bx0 + d * by0
        l2_, t2_ = a * bx0 + c * by1, b * bx0 + d * by1
        cy0, dy0, cy1, dy1 = c * by0, d * by0, c * by1, d * by1
        upright = a * d * scaling > 0 and b * c <= 0
        height, mb_x0, mb_top, doctop = self.page_height, self.mb_x0, self.mb_top, self.doctop
        norm, gs, chars, number = self.norm, graphicstate, self.chars, self.number
        glyphs = self._glyphs.setdefault(font, {})  # the font's glyphs seen so far (``_glyph`` adds them)
        # Unturned text (b, c zero; finite offsets): each glyph's corners pair up, left with left and right
        # with right (the same values), so its box is the min and max of two corners, not four (the same
        # values min and max of all four pick)
        axis = b == 0 and c == 0 and isfinite(by0) and isfinite(by1)
        stroking = gs.scolor if isinstance(gs.scolor, tuple) else (gs.scolor,)
        non_stroking = gs.ncolor if isinstance(gs.ncolor, tuple) else (gs.ncolor,)
        cs = _cs_name(name)
        needcharspace = False
        for obj in seq:
            if isinstance(obj, int | float):
                x -= obj * dxscale
                needcharspace = True
            elif isinstance(obj, bytes):
                for cid in font.decode(obj):
                    if needcharspace:
                        x += charspace
                    e2, f2 = x * a + yc + e, x * b + yd + f
                    if type(e2) not in _NUMBERS or type(f2) not in _NUMBERS:
                        x += self.render_char(
                            (a, b, c, d, e2, f2), font, fontsize, scaling, rise, cid, ncs, graphicstate
                        )
                    else:
                        glyph = glyphs.get(cid) or self._glyph(font, cid)
                        adv = glyph[1] * fontsize * scaling
                        l1, b1 = l1_ + e2, b1_ + f2
                        if axis:
                            r1, t1 = a * adv + cy0 + e2, b * adv + dy1 + f2
                            x0, x1 = r1 if r1 < l1 else l1, r1 if r1 > l1 else l1
                            y0, y1 = t1 if t1 < b1 else b1, t1 if t1 > b1 else b1
                        else:
                            r1, b2 = a * adv + cy0 + e2, b * adv + dy0 + f2
                            r2, t1 = a * adv + cy1 + e2, b * adv + dy1 + f2
                            l2, t2 = l2_ + e2, t2_ + f2
                            x0, y0 = min(l1, l2, r1, r2), min(b1, b2, t1, t2)
                            x1, y1 = max(l1, l2, r1, r2), max(b1, b2, t1, t2)
                        top = (height - y1) + mb_top
                        text = glyph[0]
                        chars.append(
                            {
                                "matrix": (a, b, c, d, e2, f2),
                                "fontname": fontname,
                                "adv": adv,
                                "upright": upright,
                                "x0": x0 + mb_x0 if mb_x0 != 0 else x0,
                                "y0": y0,
                                "x1": x1 + mb_x0 if mb_x0 != 0 else x1,
                                "y1": y1,
                                "width": x1 - x0,
                                "height": y1 - y0,
                                "size": y1 - y0,
                                "mcid": mcid,
                                "tag": tag,
                                "object_type": "char",
                                "page_number": number,
                                "ncs": cs,
                                "text": normalize_unicode(norm, text) if norm is not None else text,
                                "stroking_color": stroking,
                                "non_stroking_color": non_stroking,
                                "top": top,
                                "bottom": (height - y0) + mb_top,
                                "doctop": doctop + top,
                            }
                        )
                        x += adv
                    if cid == 32 and wordspace:
                        x += wordspace
                    needcharspace = True
            else:  # pdfminer's own warning, for what its loop cannot render
                super().render_string_horizontal(
                    [obj], matrix, (x, y), font, fontsize, scaling, charspace, wordspace, rise, dxscale,
                    ncs, graphicstate,
                )  # fmt: skip
        return (x, y)

    def _known(self, font: Any) -> tuple[bool, float]:
        known = self._fonts.get(font)
        if known is None:
            known = self._fonts[font] = (
                not font.is_vertical() and type(font.fontname) is str,
                font.get_descent(),
            )
        return known

    def _glyph(self, font: Any, cid: int) -> tuple[str, float]:
        """The glyph's text and width, pdfminer's (cached, except where its text is not defined: pdfminer's
        handling at every such char)."""
        try:
            text = font.to_unichr(cid)
            assert isinstance(text, str), str(type(text))
            glyph = self._glyphs.setdefault(font, {})[cid] = (text, font.char_width(cid))
        except PDFUnicodeNotDefined:
            glyph = (self.handle_undefined_char(font, cid), font.char_width(cid))
        return glyph

    def render_char(
        self,
        matrix: Any,
        font: Any,
        fontsize: float,
        scaling: float,
        rise: float,
        cid: int,
        ncs: Any,
        graphicstate: Any,
    ) -> float:
        """pdfminer's char, for what :meth:`render_string_horizontal` does not build itself (a string whose
        font, tag, colour space or matrix is not plain, vertical writing): its ``LTChar`` is kept in
        ``chars`` and turned into the same dict as the stock page's when the page is read."""
        adv = super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)
        self.chars.append(self.cur_item._objs.pop())
        return adv


class LeanPage(Page):
    """A pdfplumber page whose object dicts equal the stock ones, built with less work.

    With ``rotation``, the page is read as if its ``/Rotate`` were that (0, 90, 180 or 270): its box and
    every object in the frame of that turn (:func:`upright`).
    """

    def __init__(
        self,
        pdf: Any,
        page_obj: Any,
        page_number: int,
        initial_doctop: float = 0,
        rotation: int | None = None,
    ) -> None:
        super().__init__(pdf, page_obj, page_number=page_number, initial_doctop=initial_doctop)
        if rotation is None or rotation % 360 == self.rotation:
            return
        self.rotation = rotation % 360
        x0, y0, x1, y1 = (float(v) for v in resolve_all(page_obj.attrs["MediaBox"]))
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        if self.rotation in (90, 270):
            x0, y0, x1, y1 = y0, x0, y1, x1
        # pdfplumber's top-down box (its _normalize_box and _invert_box)
        self.mediabox = self.cropbox = self.bbox = (x0, 0.0, x1, y1 - y0)

    @property
    def layout(self) -> Any:
        """pdfminer's layout of the page, interpreted with this page's rotation."""
        declared = self.page_obj.rotate
        self.page_obj.rotate = self.rotation
        # pdfminer's interpreter builds its parser by the module's name for it (form XObjects too): swapped
        # only while this page is interpreted
        stock, pdfinterp.PDFContentParser = pdfinterp.PDFContentParser, _ContentParser  # type: ignore[misc]
        try:
            if self.pdf.laparams is not None:  # layout analysis reads the chars in the tree: the stock device
                return super().layout
            if not hasattr(self, "_layout"):  # pdfplumber's Page.layout, with the device above
                device = _CharDevice(self)
                try:
                    _Interpreter(self.pdf.rsrcmgr, device).process_page(self.page_obj)
                except Exception as e:
                    raise PdfminerException(e) from e
                self._layout = device.get_result()
                self._chars_printed, self._lines_drawn = device.chars, device.lines
            return self._layout
        finally:
            pdfinterp.PDFContentParser = stock  # type: ignore[misc]
            self.page_obj.rotate = declared

    def process_object(self, obj: LTItem) -> dict[str, Any]:
        attr = _attrs(obj)
        attr["object_type"] = _kind(type(obj))
        attr["page_number"] = self.page_number
        for cs in ("ncs", "scs"):
            if hasattr(obj, cs):
                attr[cs] = _cs_name(getattr(obj, cs).name)
        if isinstance(obj, LTChar | LTTextContainer):
            text = obj.get_text()
            norm = self.pdf.unicode_norm
            attr["text"] = normalize_unicode(norm, text) if norm is not None else text
        if isinstance(obj, LTChar):
            gs = obj.graphicstate
            attr["stroking_color"] = gs.scolor if isinstance(gs.scolor, tuple) else (gs.scolor,)
            attr["non_stroking_color"] = gs.ncolor if isinstance(gs.ncolor, tuple) else (gs.ncolor,)
            if isinstance(attr["fontname"], bytes):  # rare byte-encoded font names: the stock handling
                return super().process_object(obj)
        elif isinstance(obj, LTCurve):
            # Page.point2coord with the page's constants looked up once
            x_off, y_off = self.mediabox[0], self.mediabox[1] + self.height

            def coord(pt: tuple[float, float]) -> tuple[float, float]:
                return (x_off + pt[0], y_off - pt[1])

            attr["pts"] = [coord(p) for p in attr["pts"]]
            attr["path"] = [(cmd, *map(coord, pts)) for cmd, *pts in obj.original_path]
            attr["dash"] = obj.dashing_style
        mb_x0, mb_top = self.mediabox[:2]
        if "y0" in attr:
            height = self.height
            attr["top"] = (height - attr["y1"]) + mb_top
            attr["bottom"] = (height - attr["y0"]) + mb_top
            attr["doctop"] = self.initial_doctop + attr["top"]
        if "x0" in attr and mb_x0 != 0:
            attr["x0"] = attr["x0"] + mb_x0
            attr["x1"] = attr["x1"] + mb_x0
        return attr

    def parse_objects(self) -> dict[str, list[dict[str, Any]]]:
        """``Page.parse_objects``, with plain chars (nine objects in ten) built in one tight loop."""
        objects: dict[str, list[dict[str, Any]]] = {}
        chars = objects.setdefault("char", [])
        mb_x0, mb_top = self.mediabox[:2]
        height, doctop, page_number = self.height, self.initial_doctop, self.page_number
        norm = self.pdf.unicode_norm
        plain, fields, names = _PLAIN, _CHAR_FIELDS, _CS_NAMES
        layout = self.layout
        printed = getattr(self, "_chars_printed", [])  # chars the device kept out of the tree, in order
        drawn = getattr(self, "_lines_drawn", [])  # lines, likewise
        if drawn:
            objects["line"] = [o if type(o) is dict else self.process_object(o) for o in drawn]
        for obj in itertools.chain(printed, self._walk(layout._objs)):
            if type(obj) is dict:
                chars.append(obj)
                continue
            d = obj.__dict__
            if type(obj) is LTChar and tuple(d) == fields:
                matrix, fontname, mcid, tag = d["matrix"], d["fontname"], d["mcid"], d["tag"]
                ncs = obj.ncs.name
                if (
                    type(fontname) is str
                    and type(mcid) in plain
                    and type(tag) in plain
                    and type(matrix) is tuple
                    and plain.issuperset(map(type, matrix))
                    and ncs in names
                ):
                    gs = obj.graphicstate
                    text = obj._text
                    x0, x1, y0, y1 = d["x0"], d["x1"], d["y0"], d["y1"]
                    top = (height - y1) + mb_top
                    chars.append(
                        {
                            "matrix": matrix,
                            "fontname": fontname,
                            "adv": d["adv"],
                            "upright": d["upright"],
                            "x0": x0 + mb_x0 if mb_x0 != 0 else x0,
                            "y0": y0,
                            "x1": x1 + mb_x0 if mb_x0 != 0 else x1,
                            "y1": y1,
                            "width": d["width"],
                            "height": d["height"],
                            "size": d["size"],
                            "mcid": mcid,
                            "tag": tag,
                            "object_type": "char",
                            "page_number": page_number,
                            "ncs": names[ncs],
                            "text": normalize_unicode(norm, text) if norm is not None else text,
                            "stroking_color": gs.scolor if isinstance(gs.scolor, tuple) else (gs.scolor,),
                            "non_stroking_color": gs.ncolor if isinstance(gs.ncolor, tuple) else (gs.ncolor,),
                            "top": top,
                            "bottom": (height - y0) + mb_top,
                            "doctop": doctop + top,
                        }
                    )
                    continue
            attr = self.process_object(obj)
            kind = attr["object_type"]
            if kind != "anno":
                objects.setdefault(kind, []).append(attr)
        if not chars:
            del objects["char"]
        return objects

    def _walk(self, objs: list[Any]) -> Iterator[Any]:
        """``Page.iter_layout_objects`` without the conversion: containers (when laparams) and leaves."""
        for obj in objs:
            if isinstance(obj, LTContainer):
                if self.pdf.laparams is not None:
                    yield obj
                yield from self._walk(obj._objs)
            else:
                yield obj


def lean(page: Page, rotation: int | None = None) -> LeanPage:
    """The same page of the same open PDF, as a :class:`LeanPage` (nothing parsed yet)."""
    return LeanPage(
        page.pdf,
        page.page_obj,
        page_number=page.page_number,
        initial_doctop=page.initial_doctop,
        rotation=rotation,
    )


UPRIGHT = 0.5  # a page reads in a frame where at least this share of its chars run left to right
OUTSIDE = 0.01  # more than this share of the chars outside the page's box: the page cannot be read
_BOX_TOL = 1.0  # pt


def _share(chars: list[dict[str, Any]], test: Any) -> float:
    return sum(map(test, chars)) / len(chars) if chars else 1.0


def _upright_share(chars: list[dict[str, Any]]) -> float:
    """The share of ``chars`` printed left to right, top up (a slant, as in italics, allowed; upside down
    is not); one pass, the test inlined (it runs on every char of every page)."""
    if not chars:
        return 1.0
    # counted per distinct (a, b, d) of the chars' matrices (a page has a handful), in C
    seen = Counter(map(itemgetter(0, 1, 3), map(itemgetter("matrix"), chars)))
    n = sum(k for (a, b, d), k in seen.items() if a > 0 and d > 0 and abs(b) <= 0.1 * a)
    return n / len(chars)


def _outside(page: Page) -> float:
    w, h = page.width + _BOX_TOL, page.height + _BOX_TOL

    def out(c: dict[str, Any]) -> bool:
        return not (-_BOX_TOL <= c["x0"] and c["x1"] <= w and -_BOX_TOL <= c["top"] and c["bottom"] <= h)

    return _share(page.chars, out)


class PageFrameError(ValueError):
    """No frame of the page holds its text upright and inside the page's box."""


def upright(page: LeanPage) -> LeanPage:
    """The page read in the frame where its text runs left to right: as declared (``/Rotate`` included),
    else turned by the first other quarter turn that makes most of its chars upright (a page turned as a
    whole, shown sideways). Raises :class:`PageFrameError` where no turn does, or where the
    upright text lies outside the page's box (what is printed, and cut off, cannot be told).
    """
    chars = page.chars
    if not chars or (_upright_share(chars) >= UPRIGHT and (page.rotation == 0 or not _outside(page))):
        return page
    declared = page.rotation
    for turn in (0, 90, 180, 270):
        if turn == declared:
            continue
        other = lean(page, rotation=turn)
        if _upright_share(other.chars) >= UPRIGHT:
            page.close()
            page = other
            break
        other.close()
    else:
        if _upright_share(chars) < UPRIGHT:
            raise PageFrameError(
                f"the text does not run left to right in any quarter turn of the page (/Rotate {declared}; "
                f"{_upright_share(chars):.0%} of its chars upright as displayed)"
            )
    outside = _outside(page)
    if outside > OUTSIDE:
        raise PageFrameError(
            f"/Rotate {declared}: {outside:.0%} of the text lies outside the page's box "
            f"({page.width:.0f} x {page.height:.0f} pt) in the frame where it reads upright (turned "
            f"{page.rotation}); what is printed, and what is cut off, cannot be told"
        )
    return page


def cluster_objects(xs: list[Any], key: Any, tolerance: float) -> list[list[Any]]:
    """pdfplumber's ``cluster_objects(xs, key, tolerance)`` (``preserve_order`` off): the same groups in the
    same order, each key computed once and the groups cut from one sort of the indices (pdfplumber's goes
    through a generator, a dict built from a chain of lists and ``groupby``: its costs are per call and
    per object, and it runs for every cell's lines and words)."""
    values = [key(x) for x in xs]
    cluster: dict[Any, int] = {}  # pdfplumber's cluster_list over the distinct values, as a value -> index
    last, n = None, -1
    for v in sorted(set(values)):
        if n < 0 or tolerance == 0 or not v <= last + tolerance:
            n += 1
        cluster[v] = n
        last = v
    ids = [cluster[v] for v in values]
    groups: list[list[Any]] = []
    current = None
    for i in sorted(range(len(xs)), key=ids.__getitem__):  # stable: each group in the objects' order
        if ids[i] != current:
            current = ids[i]
            groups.append([])
        groups[-1].append(xs[i])
    return groups


def word_chars(chars: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The chars of each word, as pdfplumber's ``WordExtractor`` with its defaults splits upright chars: lines
    by ``cluster_objects`` on top (``y_tolerance``), each sorted by x0; a blank char ends a word, an empty
    char is a word of its own, and a char left of the last one's start, more than ``x_tolerance`` right of
    its end or more than ``y_tolerance`` off its top starts one."""
    from pdfplumber.utils.text import DEFAULT_X_TOLERANCE, DEFAULT_Y_TOLERANCE

    xt, yt = DEFAULT_X_TOLERANCE, DEFAULT_Y_TOLERANCE
    for line in cluster_objects(chars, itemgetter("top"), yt):
        word: list[dict[str, Any]] = []
        for c in sorted(line, key=itemgetter("x0")):
            text = c["text"]
            if text.isspace():
                if word:
                    yield word
                word = []
            elif text == "":
                if word:
                    yield word
                yield [c]
                word = []
            elif word and (
                c["x0"] < (p := word[-1])["x0"] or c["x0"] > p["x1"] + xt or abs(c["top"] - p["top"]) > yt
            ):
                yield word
                word = [c]
            else:
                word.append(c)
        if word:
            yield word
