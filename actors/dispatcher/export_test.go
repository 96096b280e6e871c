package dispatcher

// ProgressBuffer exposes progressBuffer to the external tests.
const ProgressBuffer = progressBuffer
