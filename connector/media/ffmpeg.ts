import type ffmpeg from 'fluent-ffmpeg';

/**
 * fluent-ffmpeg bound to the ffmpeg binary shipped in @ffmpeg-installer/ffmpeg (it carries
 * libopus and libx264), so the host needs no ffmpeg of its own. Loaded on the first conversion:
 * a connector that never converts media does not hold them in memory.
 */
let loaded: Promise<typeof ffmpeg> | undefined;
function loadFfmpeg(): Promise<typeof ffmpeg> {
  loaded ??= Promise.all([import('fluent-ffmpeg'), import('@ffmpeg-installer/ffmpeg')]).then(([fluent, installer]) => {
    fluent.default.setFfmpegPath(installer.default.path);
    return fluent.default;
  });
  return loaded;
}

/** A conversion that takes longer than this is killed: a stuck ffmpeg must not hold a send. */
const FFMPEG_TIMEOUT_SECONDS = 300;

export interface FfmpegRun {
  /** Input duration as ffmpeg reported it, in seconds (undefined for images or unknown). */
  inputDurationSeconds?: number;
  /** Width and height of the first video stream of the input, when it has one. */
  videoSize?: { width: number; height: number };
}

/**
 * Runs one ffmpeg command from `inputPath` to `outputPath`; `configure` adds the options.
 * Resolves with what ffmpeg reported about the input, rejects with ffmpeg's error (its stderr
 * tail is in the message: no message contents are in it, only stream descriptions).
 */
export async function runFfmpeg(
  inputPath: string,
  outputPath: string,
  configure: (command: ffmpeg.FfmpegCommand) => ffmpeg.FfmpegCommand,
): Promise<FfmpegRun> {
  const ffmpeg = await loadFfmpeg();
  return new Promise((resolve, reject) => {
    const run: FfmpegRun = {};
    configure(ffmpeg({ timeout: FFMPEG_TIMEOUT_SECONDS }).input(inputPath))
      .on('codecData', (data: { duration?: string; video_details?: string[] }) => {
        const seconds = parseFfmpegDuration(data.duration);
        if (seconds !== undefined) run.inputDurationSeconds = seconds;
        const size = parseVideoSize(data.video_details);
        if (size) run.videoSize = size;
      })
      .on('error', (error: Error) => reject(error))
      .on('end', () => resolve(run))
      .save(outputPath);
  });
}

/** "00:01:02.50" -> 62.5; undefined for "N/A" or anything else unparsable. */
function parseFfmpegDuration(text: string | undefined): number | undefined {
  const match = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(text?.trim() ?? '');
  if (!match) return undefined;
  const [, hours, minutes, seconds] = match;
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds);
}

/** Finds "320x240" among the comma-separated parts of ffmpeg's video stream description. */
function parseVideoSize(details: string[] | undefined): { width: number; height: number } | undefined {
  for (const part of details ?? []) {
    const match = /(?:^|\s)(\d{2,5})x(\d{2,5})(?:\s|$)/.exec(part.trim());
    if (match) return { width: Number(match[1]), height: Number(match[2]) };
  }
  return undefined;
}
