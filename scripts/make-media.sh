#!/usr/bin/env bash
# Generates Lockstep's test and demo media with ffmpeg (nothing is downloaded).
#
#   scripts/make-media.sh av OUT.mp4 [SECONDS] [WxH]         H.264 + AAC test pattern with a tone
#   scripts/make-media.sh framecode OUT.mp4 [SECONDS] [WxH] [AUDIO_SECONDS]
#                                                          H.264 + AAC whose pixels carry the frame number;
#                                                          the tone lasts AUDIO_SECONDS (default SECONDS)
#   scripts/make-media.sh framecode-tones OUT.mp4 [SECONDS] [WxH]
#                                                          the frame-code clip whose audio says the second:
#                                                          a tone of 200 + 100 * (second mod 16) Hz
#   scripts/make-media.sh rotated OUT.mp4 [SECONDS] [WxH]    the av pattern stored as WxH with a display
#                                                          matrix saying "turn 90° counterclockwise", as a
#                                                          phone stores a video shot upright
#   scripts/make-media.sh framecode-ts OUT.ts [SECONDS] [WxH] the frame-code clip remuxed to MPEG-TS as
#                                                          ffmpeg muxes it: timestamps from 1.4 s,
#                                                          the first clock reference 0.7 s before
#   scripts/make-media.sh hap OUT.mov [SECONDS] [WxH]         the test pattern as HAP video (Hap1), as media
#                                                          servers and VJ tools export it
#   scripts/make-media.sh interlaced OUT.ts [SECONDS] [WxH]  MPEG-2 in MPEG-TS, 25 frames a second of
#                                                          top-field-first fields 1/50 s apart: moving
#                                                          edges comb unless deinterlaced
#   scripts/make-media.sh languages OUT.mkv|OUT.mp4 [SECONDS] [WxH]
#                                                          black video, two audio tracks ("English" eng
#                                                          440 Hz, default; "Français" fra 1000 Hz) and
#                                                          two subtitle tracks (eng, fra) showing a white
#                                                          line all along: SubRip in Matroska (SSA/ASS for
#                                                          OUT.ass.mkv), mov_text in MP4
#   scripts/make-media.sh framecode-av1 OUT.mp4 [SECONDS] [WxH] the frame-code video alone, as AV1 (libaom)
#   scripts/make-media.sh barcode OUT.mp4 [SECONDS] [WxH]   H.264 whose frame number is written in black and
#                                                          white bars, repeated in each quarter of the
#                                                          picture: readable from a screenshot of a 2x2 wall
#   scripts/make-media.sh captions OUT.mp4 [SECONDS] [WxH]  black H.264 carrying a CEA-608 closed caption
#                                                          (ATSC A/53 SEI, channel CC1): "CAPTION ON" shown
#                                                          from 1 s to SECONDS - 1 s (SECONDS at least 3)
#
# Frame code (decoded by GroundTruth.FrameCode): frame n is one flat colour. With level(i) = 24 + 13*i,
# Y = level(n mod 16), U = level((n / 16) mod 16), V = level((n / 256) mod 16): 12 bits, n mod 4096,
# readable from any crop of the picture at any scale. 30 fps, a keyframe every 30 frames (1 s), and no
# B-frames: decode order is presentation order, so keyframe times are exact (with B-frames, qtdemux snaps a
# seek that lands exactly on a keyframe to its decode time, one frame early).
#
# Bar code (read by TestSupport's BarCode): the frame code's colours leave the RGB gamut (V = 24 is
# far below any displayable red), so a screen cannot show them back. A bar code survives any sink's
# colour conversion: each quarter of the picture holds 14 vertical bars, black (Y 16), white
# (Y 235), then bit i of the frame number in bar 2 + i (white for 1): 12 bits, n mod 4096.
set -euo pipefail

kind=${1:?usage: make-media.sh av|framecode|barcode|framecode-ts|framecode-av1|rotated|hap|interlaced|languages|captions OUT [SECONDS] [WxH]}
out=${2:?output file}
seconds=${3:-10}
size=${4:-320x180}
audio_seconds=${5:-$seconds}
fps=30
gop=30

tmp=""
plain=""
trap 'rm -f "$tmp" "$plain"' EXIT

# encode EXT FFMPEG-ARGS...: runs ffmpeg into a temporary file beside $out, then moves it into place.
encode() {
    local ext=$1
    shift
    mkdir -p "$(dirname "$out")"
    tmp="$out.tmp.$$.$ext"
    ffmpeg -nostdin -hide_banner -loglevel error -y "$@" "$tmp"
    mv "$tmp" "$out"
}

# remux KIND EXT FFMPEG-ARGS...: makes the KIND clip, then copies its streams into $out with the arguments.
remux() {
    local source=$1 ext=$2
    shift 2
    mkdir -p "$(dirname "$out")"
    plain="$out.plain.$$.mp4"
    "$0" "$source" "$plain" "$seconds" "$size"
    encode "$ext" -i "$plain" -c copy "$@"
}

bframes=()
audio="sine=frequency=440:sample_rate=48000:duration=${audio_seconds}"
case "$kind" in
    av)
        video="testsrc2=size=${size}:rate=${fps}:duration=${seconds}"
        ;;
    framecode-tones)
        video="color=c=black:size=${size}:rate=${fps}:duration=${seconds},format=yuv420p,geq=lum='24+13*mod(N,16)':cb='24+13*mod(floor(N/16),16)':cr='24+13*mod(floor(N/256),16)'"
        audio="aevalsrc=exprs='0.5*sin(2*PI*(200+100*mod(floor(t)\\,16))*t)':s=48000:d=${seconds}"
        bframes=(-bf 0)
        ;;
    framecode)
        video="color=c=black:size=${size}:rate=${fps}:duration=${seconds},format=yuv420p,geq=lum='24+13*mod(N,16)':cb='24+13*mod(floor(N/16),16)':cr='24+13*mod(floor(N/256),16)'"
        bframes=(-bf 0)
        ;;
    barcode)
        # q: the bar under the pixel, counted across its quarter of the picture.
        video="color=c=black:size=${size}:rate=${fps}:duration=${seconds},format=yuv420p,geq=lum='st(0,floor(mod(X,W/2)*14/(W/2)));if(eq(ld(0),0),16,if(eq(ld(0),1),235,if(mod(floor(N/pow(2,ld(0)-2)),2),235,16)))':cb=128:cr=128"
        bframes=(-bf 0)
        ;;
    rotated)
        remux av mp4 -metadata:s:v:0 rotate=90
        exit 0
        ;;
    framecode-ts)
        remux framecode ts -f mpegts
        exit 0
        ;;
    framecode-av1)
        encode mp4 -f lavfi -i "color=c=black:size=${size}:rate=${fps}:duration=${seconds},format=yuv420p,geq=lum='24+13*mod(N,16)':cb='24+13*mod(floor(N/16),16)':cr='24+13*mod(floor(N/256),16)'" \
            -c:v libaom-av1 -cpu-used 8 -crf 20 -b:v 0 -g "$gop" -keyint_min "$gop" -f mp4
        exit 0
        ;;
    hap)
        encode mov -f lavfi -i "testsrc2=size=${size}:rate=${fps}:duration=${seconds}" -c:v hap -f mov
        exit 0
        ;;
    interlaced)
        # A 50 fps pattern woven two frames to one: each frame's lines alternate between two moments.
        encode ts -f lavfi -i "testsrc2=size=${size}:rate=50:duration=${seconds}" \
            -vf "tinterlace=mode=interleave_top,fieldorder=tff" \
            -pix_fmt yuv420p -c:v mpeg2video -flags +ilme+ildct -top 1 -q:v 2 -g 25 -f mpegts
        exit 0
        ;;
    languages)
        subtitles=()
        for language in eng fra; do
            srt="$out.$language.$$.srt"
            printf '1\n00:00:00,000 --> 00:%02d:%02d,000\n%s\n\n' $((seconds / 60)) $((seconds % 60)) \
                "$([[ $language == eng ]] && echo ENGLISH SUBTITLE || echo SOUS-TITRE FRANCAIS)" >"$srt"
            subtitles+=("$srt")
        done
        trap 'rm -f "$tmp" "$plain" "${subtitles[@]}"' EXIT
        case "$out" in
            *.mp4) container=(-c:s mov_text -f mp4) ;;
            *.ass.mkv) container=(-c:s ass -f matroska) ;;
            *) container=(-c:s srt -f matroska) ;;
        esac
        encode "${out##*.}" -f lavfi -i "color=c=black:size=${size}:rate=${fps}:duration=${seconds}" \
            -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=${seconds}" \
            -f lavfi -i "sine=frequency=1000:sample_rate=48000:duration=${seconds}" \
            -i "${subtitles[0]}" -i "${subtitles[1]}" \
            -map 0:v -map 1:a -map 2:a -map 3 -map 4 \
            -c:v libx264 -preset veryfast -pix_fmt yuv420p -g "$gop" -c:a aac -b:a 64k \
            -metadata:s:a:0 language=eng -metadata:s:a:0 title=English \
            -metadata:s:a:1 language=fra -metadata:s:a:1 title=Français \
            -metadata:s:s:0 language=eng -metadata:s:s:1 language=fra \
            -disposition:a:0 default -disposition:a:1 0 -disposition:s:0 0 -disposition:s:1 0 \
            "${container[@]}"
        exit 0
        ;;
    captions)
        plain="$out.plain.$$.h264"
        captioned="$out.captioned.$$.h264"
        trap 'rm -f "$tmp" "$plain" "$captioned"' EXIT
        mkdir -p "$(dirname "$out")"
        # One slice a frame, no B-frames: each frame's SEI carries that frame's caption bytes.
        ffmpeg -nostdin -hide_banner -loglevel error -y \
            -f lavfi -i "color=c=black:size=${size}:rate=${fps}:duration=${seconds}" \
            -c:v libx264 -preset veryfast -pix_fmt yuv420p -g "$gop" -bf 0 -threads 1 -f h264 "$plain"
        python3 "$(dirname "$0")/add-captions.py" "$plain" "$captioned" "$fps" "CAPTION ON" 1 $((seconds - 1))
        encode mp4 -r "$fps" -i "$captioned" -c copy -f mp4
        exit 0
        ;;
    *)
        echo "make-media.sh: unknown kind '$kind' (expected av, framecode, framecode-tones, barcode, framecode-ts, framecode-av1, rotated, hap, interlaced, languages or captions)" >&2
        exit 2
        ;;
esac

encode mp4 -f lavfi -i "$video" \
    -f lavfi -i "$audio" \
    -map 0:v -map 1:a \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -g "$gop" -keyint_min "$gop" -sc_threshold 0 -crf 16 "${bframes[@]}" \
    -c:a aac -b:a 96k \
    -metadata title="Lockstep ${kind} ${seconds}s"
