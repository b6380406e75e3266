// Every platform package (npm/<platform>/, package.json `napi.targets`): how this machine
// builds its addon, and what the platform test expects of the file.
//
// - Linux gnu: zig through cargo-zigbuild (`napi build -x`), pinned to glibc 2.17 by the
//   target's `.2.17` suffix, so the binary loads on every glibc Linux Node 20 runs on
//   (RHEL/CentOS 7 and later, Ubuntu 14.04 and later, Amazon Linux 2).
// - Linux musl: zig (`-x`), dynamically linked to musl (napi's -crt-static).
// - macOS: zig (`-x`) with MACOSX_DEPLOYMENT_TARGET always set (without it zig stamps the
//   newest macOS it knows as the minimum): 10.13 for x64, 11.0 (the first) for arm64.
// - Windows x64: mingw (`x86_64-pc-windows-gnu`) with napi's `dyn-symbols` (napi_* found
//   in node.exe at load time, no node.lib), shipped under the MSVC package's name,
//   win32-x64-msvc, where index.js looks for it. A true MSVC build needs a Windows runner
//   (or cargo-xwin, which downloads the MSVC CRT and SDK: not reachable here).
export const PLATFORMS = [
  { platform: 'linux-x64-gnu', triple: 'x86_64-unknown-linux-gnu', build: 'x86_64-unknown-linux-gnu.2.17', expect: { format: 'ELF', arch: 'x64', glibc: '2.17' } },
  { platform: 'linux-arm64-gnu', triple: 'aarch64-unknown-linux-gnu', build: 'aarch64-unknown-linux-gnu.2.17', expect: { format: 'ELF', arch: 'arm64', glibc: '2.17' } },
  { platform: 'linux-x64-musl', triple: 'x86_64-unknown-linux-musl', build: 'x86_64-unknown-linux-musl', expect: { format: 'ELF', arch: 'x64', glibc: null, libc: /^libc\.(musl-x86_64\.)?so/ } },
  { platform: 'linux-arm64-musl', triple: 'aarch64-unknown-linux-musl', build: 'aarch64-unknown-linux-musl', expect: { format: 'ELF', arch: 'arm64', glibc: null, libc: /^libc\.(musl-aarch64\.)?so/ } },
  { platform: 'darwin-x64', triple: 'x86_64-apple-darwin', build: 'x86_64-apple-darwin', macos: '10.13', expect: { format: 'Mach-O', arch: 'x64', minMacos: '10.13' } },
  { platform: 'darwin-arm64', triple: 'aarch64-apple-darwin', build: 'aarch64-apple-darwin', macos: '11.0', expect: { format: 'Mach-O', arch: 'arm64', minMacos: '11.0', signed: true } },
  { platform: 'win32-x64-msvc', triple: 'x86_64-pc-windows-msvc', build: 'x86_64-pc-windows-gnu', mingw: true, expect: { format: 'PE', arch: 'x64' } },
]

/** The addon's file name in its platform package: `toolhost.linux-x64-gnu.node`. */
export const binaryFile = (p) => `toolhost.${p.platform}.node`

/** Windows DLLs every Windows 10 has; the addon may import these and no others. */
export const WINDOWS_SYSTEM_DLLS = /^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|userenv|ws2_32|msvcrt|ucrtbase|shell32|ole32|secur32|crypt32|user32|synchronization|api-ms-win-[a-z0-9-]+)\.dll$/i
