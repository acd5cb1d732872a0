// qrcode-terminal (already a dependency, for the log's drawing) vendors Kazuhiko Arase's MIT QR
// encoder and ships no types for it; this covers the part core/qr-image.ts uses.
declare module 'qrcode-terminal/vendor/QRCode/index.js' {
  class QRCode {
    /** `typeNumber` -1 picks the smallest version that fits; `errorCorrectLevel`: L 1, M 0, Q 3, H 2. */
    constructor(typeNumber: number, errorCorrectLevel: number);
    addData(data: string): void;
    make(): void;
    getModuleCount(): number;
    isDark(row: number, col: number): boolean;
  }
  export default QRCode;
}
