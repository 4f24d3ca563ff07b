; Inno Setup 6 script: turns the PyInstaller onedir (dist\torch-setup) into TorchSetup-<ver>-setup.exe.
;
;   pyinstaller --noconfirm build.spec
;   iscc installer\windows\torch-setup.iss
;   iscc /DBundleDir=C:\bundles\cu126-cp312 installer\windows\torch-setup.iss   ; offline edition
;
; Per-user install by default (no administrator rights needed; the user may choose "all users").
; The offline edition copies a wheel bundle (made with `torch-setup bundle`) into
; {app}\torch-bundle, next to the executable, where the assistant finds it on its own.

#define AppName "Torch Setup Assistant"
#define AppExe "torch-setup-gui.exe"
#define CliExe "torch-setup.exe"
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef DistDir
  #define DistDir "..\..\dist\torch-setup"
#endif
#ifdef BundleDir
  #define OutputName "TorchSetup-" + AppVersion + "-offline-setup"
#else
  #define OutputName "TorchSetup-" + AppVersion + "-setup"
#endif

[Setup]
AppId={{6E0B8C1A-3F5D-4B7E-9C2A-7D41E5A0B9F3}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Torch Setup Assistant team
DefaultDirName={autopf}\Torch Setup Assistant
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible arm64
ArchitecturesInstallIn64BitMode=x64compatible arm64
OutputDir=..\..\dist
OutputBaseFilename={#OutputName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\{#AppExe}
#ifexist "..\..\resources\icons\app.ico"
SetupIconFile=..\..\resources\icons\app.ico
#endif
; The assistant never needs the installer's rights to run.
CloseApplications=yes

[Languages]
Name: "en"; MessagesFile: "compiler:Default.isl"
#ifexist "compiler:Languages\ChineseSimplified.isl"
Name: "zh_CN"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"
#else
  #ifexist "compiler:Languages\Unofficial\ChineseSimplified.isl"
Name: "zh_CN"; MessagesFile: "compiler:Languages\Unofficial\ChineseSimplified.isl"
  #endif
#endif

[CustomMessages]
en.AddToPath=Let me run torch-setup from a command prompt (adds it to PATH)
zh_CN.AddToPath=允许在命令提示符中运行 torch-setup（添加到 PATH）
en.LaunchNow=Start Torch Setup Assistant now
zh_CN.LaunchNow=立即启动 PyTorch 安装助手

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"
Name: "addtopath"; Description: "{cm:AddToPath}"; Flags: unchecked

[Files]
Source: "{#DistDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs
#ifdef BundleDir
Source: "{#BundleDir}\*"; DestDir: "{app}\torch-bundle"; Flags: ignoreversion recursesubdirs createallsubdirs
#endif

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
; Per-user PATH entry for the console executable (torch-setup install --config ...).
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; \
  ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}')); \
  Flags: preservestringtype

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchNow}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
Type: filesandordirs; Name: "{app}\_internal"

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Paths: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Paths) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Paths) + ';') = 0;
end;
