; Inno Setup 6 script: turns the PyInstaller onedir (dist\torch-setup) into TorchSetup-<ver>-setup.exe.
;
;   pyinstaller --noconfirm build.spec
;   iscc installer\windows\torch-setup.iss
;   iscc /DBundleDir=C:\bundles\cu126-cp312 installer\windows\torch-setup.iss   ; offline edition
;
; Signed (only when a certificate is configured; docs/packaging.md "Signing"): the certificate's
; SHA-1 thumbprint in TORCH_SETUP_SIGN_SHA1 (or /DSignCertSha1=...), and the sign tool "tsasign"
; defined on the command line as the parameters it is given:
;   set TORCH_SETUP_SIGN_SHA1=0123...cdef
;   iscc "/Stsasign=$p" installer\windows\torch-setup.iss
; Then the setup, its uninstaller and both executables are signed with signtool.exe (SHA-256,
; RFC 3161 timestamp); without it the build is unsigned and Windows says so (SmartScreen).
;
; Per-user install by default (no administrator rights needed; the user may choose "all users").
; The offline edition copies a wheel bundle (made with `torch-setup bundle`) into
; {app}\torch-bundle, next to the executable, where the assistant finds it on its own; a CUDA
; bundle is over 2.1 GB, so that edition spans Setup.exe + Setup-N.bin files kept side by side.
;
; This file is UTF-8 with a byte order mark: Inno Setup before 6.3 reads a file without one as
; ANSI, and the Chinese texts below would be garbled. tests/test_installers.py checks it.

#define AppName "Torch Setup Assistant"
#define AppExe "torch-setup-gui.exe"
#define CliExe "torch-setup.exe"
#ifndef DistDir
  #define DistDir AddBackslash(SourcePath) + "..\..\dist\torch-setup"
#endif
; The version: given (/DAppVersion=0.2.0), or read from the version resource build.spec puts on
; the executable (installer/app_info.py), so the setup can never name another version than its app.
#ifndef AppVersion
  #if FileExists(DistDir + "\" + CliExe)
    #define AppVersion GetStringFileInfo(DistDir + "\" + CliExe, PRODUCT_VERSION)
  #endif
#endif
#ifdef AppVersion
  #if AppVersion == ""
    #undef AppVersion
  #endif
#endif
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#if FileExists(DistDir + "\" + CliExe)
  #define AppVersionNumbers GetVersionNumbersString(DistDir + "\" + CliExe)
#else
  #define AppVersionNumbers "0.0.0.0"
#endif
#ifdef BundleDir
  #define OutputName "TorchSetup-" + AppVersion + "-offline-setup"
#else
  #define OutputName "TorchSetup-" + AppVersion + "-setup"
#endif
; Signing: on when a certificate thumbprint is configured, off otherwise.
#ifndef SignCertSha1
  #define SignCertSha1 GetEnv("TORCH_SETUP_SIGN_SHA1")
#endif
#ifndef TimestampUrl
  #define TimestampUrl "http://timestamp.digicert.com"
#endif
#if SignCertSha1 != ""
  #define Signing
  #define SignFlag "signonce"
#else
  #define SignFlag ""
#endif
; Simplified Chinese: Inno Setup 6 does not ship ChineseSimplified.isl (it is an unofficial
; translation, downloaded separately). Use it where it was put beside the compiler, or given with
; /DZhMessages=path; otherwise the zh_CN language is English's standard texts with this script's own
; Chinese for what a beginner reads ([LangOptions], [Messages] and [CustomMessages] below).
#ifndef ZhMessages
  #if FileExists(AddBackslash(CompilerPath) + "Languages\ChineseSimplified.isl")
    #define ZhMessages AddBackslash(CompilerPath) + "Languages\ChineseSimplified.isl"
  #elif FileExists(AddBackslash(CompilerPath) + "Languages\Unofficial\ChineseSimplified.isl")
    #define ZhMessages AddBackslash(CompilerPath) + "Languages\Unofficial\ChineseSimplified.isl"
  #endif
#endif

[Setup]
AppId={{6E0B8C1A-3F5D-4B7E-9C2A-7D41E5A0B9F3}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Torch Setup Assistant team
VersionInfoVersion={#AppVersionNumbers}
VersionInfoProductTextVersion={#AppVersion}
VersionInfoProductName={#AppName}
VersionInfoDescription={#AppName} Setup
VersionInfoCompany=Torch Setup Assistant team
DefaultDirName={autopf}\Torch Setup Assistant
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
; Windows 10 or later: what Python 3.9+, PySide6 and PyTorch's wheels support.
MinVersion=10.0
ArchitecturesAllowed=x64compatible arm64
ArchitecturesInstallIn64BitMode=x64compatible arm64
; the PATH entry (task addtopath): running programs (Explorer, new terminals) are told to re-read it
ChangesEnvironment=yes
OutputDir=..\..\dist
OutputBaseFilename={#OutputName}
Compression=lzma2/max
SolidCompression=yes
#ifdef BundleDir
; Offline edition: a CUDA wheel set is over 2.1 GB, more than one Setup.exe may carry; the data goes
; into <name>-1.bin, -2.bin, ... beside it. 2,000,000,000 bytes per slice keeps each file under the
; 2 GiB that release hosts and FAT32 sticks accept; Setup finds the slices in its own folder.
DiskSpanning=yes
DiskSliceSize=2000000000
SlicesPerDisk=1
#endif
WizardStyle=modern
ShowLanguageDialog=auto
SetupIconFile=..\..\resources\icons\app.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
; The assistant never needs the installer's rights to run.
CloseApplications=yes
#ifdef Signing
SignTool=tsasign signtool.exe sign /sha1 {#SignCertSha1} /fd sha256 /tr {#TimestampUrl} /td sha256 /d $q{#AppName}$q $f
SignedUninstaller=yes
#endif

[Languages]
Name: "en"; MessagesFile: "compiler:Default.isl"
#ifdef ZhMessages
Name: "zh_CN"; MessagesFile: "{#ZhMessages}"
#else
Name: "zh_CN"; MessagesFile: "compiler:Default.isl"

[LangOptions]
zh_CN.LanguageName=简体中文
zh_CN.LanguageID=$0804

[Messages]
; Our own words for the pages a beginner sees, used only when ChineseSimplified.isl is absent
; (the rest of Inno Setup's texts stay English then).
zh_CN.SetupAppTitle=安装
zh_CN.SetupWindowTitle=安装 - %1
zh_CN.UninstallAppTitle=卸载
zh_CN.UninstallAppFullTitle=卸载 %1
zh_CN.WinVersionTooLowError=本程序需要 %1 %2 或更高版本。
zh_CN.PrivilegesRequiredOverrideTitle=选择安装方式
zh_CN.PrivilegesRequiredOverrideInstruction=为谁安装
zh_CN.PrivilegesRequiredOverrideText1=%1 可以为这台电脑的所有用户安装（需要管理员权限），也可以只为你安装。
zh_CN.PrivilegesRequiredOverrideText2=%1 可以只为你安装，也可以为这台电脑的所有用户安装（需要管理员权限）。
zh_CN.PrivilegesRequiredOverrideAllUsers=为所有用户安装(&A)
zh_CN.PrivilegesRequiredOverrideAllUsersRecommended=为所有用户安装（推荐）(&A)
zh_CN.PrivilegesRequiredOverrideCurrentUser=只为我安装(&M)
zh_CN.PrivilegesRequiredOverrideCurrentUserRecommended=只为我安装（推荐）(&M)
zh_CN.ExitSetupTitle=退出安装
zh_CN.ExitSetupMessage=安装尚未完成。现在退出，程序不会被安装。%n%n以后可以再次运行安装程序完成安装。%n%n要退出吗？
zh_CN.ButtonBack=< 上一步(&B)
zh_CN.ButtonNext=下一步(&N) >
zh_CN.ButtonInstall=安装(&I)
zh_CN.ButtonOK=确定
zh_CN.ButtonCancel=取消
zh_CN.ButtonYes=是(&Y)
zh_CN.ButtonNo=否(&N)
zh_CN.ButtonFinish=完成(&F)
zh_CN.ButtonBrowse=浏览(&B)...
zh_CN.ButtonWizardBrowse=浏览(&R)...
zh_CN.ClickNext=点击“下一步”继续，或点击“取消”退出安装。
zh_CN.WizardSelectDir=选择安装位置
zh_CN.SelectDirDesc=要把 [name] 安装到哪里？
zh_CN.SelectDirLabel3=安装程序会把 [name] 安装到下面的文件夹。
zh_CN.SelectDirBrowseLabel=点击“下一步”继续。要换一个文件夹，请点击“浏览”。
zh_CN.DiskSpaceGBLabel=至少需要 [gb] GB 可用磁盘空间。
zh_CN.DiskSpaceMBLabel=至少需要 [mb] MB 可用磁盘空间。
zh_CN.WizardSelectTasks=选择附加任务
zh_CN.SelectTasksDesc=还要做哪些事？
zh_CN.SelectTasksLabel2=选择安装 [name] 时要执行的附加任务，然后点击“下一步”。
zh_CN.WizardReady=准备安装
zh_CN.ReadyLabel1=安装程序已准备好在这台电脑上安装 [name]。
zh_CN.ReadyLabel2a=点击“安装”开始安装；要检查或修改设置，请点击“上一步”。
zh_CN.ReadyMemoDir=安装位置：
zh_CN.ReadyMemoTasks=附加任务：
zh_CN.WizardInstalling=正在安装
zh_CN.InstallingLabel=正在把 [name] 安装到这台电脑上，请稍候。
zh_CN.FinishedHeadingLabel=[name] 安装完成
zh_CN.FinishedLabelNoIcons=[name] 已安装到这台电脑上。
zh_CN.FinishedLabel=[name] 已安装到这台电脑上。可以通过已创建的快捷方式启动它。
zh_CN.ClickFinish=点击“完成”退出安装。
zh_CN.SetupAborted=安装没有完成。%n%n请解决问题后再次运行安装程序。
zh_CN.ConfirmUninstall=确定要完全删除 %1 及其所有组件吗？
zh_CN.UninstallStatusLabel=正在从这台电脑上删除 %1，请稍候。
zh_CN.UninstalledAll=已从这台电脑上删除 %1。
zh_CN.UninstalledMost=%1 卸载完成。%n%n有些项目无法删除，可以手动删除。
zh_CN.WizardUninstalling=卸载状态
zh_CN.StatusUninstalling=正在卸载 %1...
#endif

[CustomMessages]
en.AddToPath=Let me run torch-setup from a command prompt (adds it to PATH)
zh_CN.AddToPath=允许在命令提示符中运行 torch-setup（添加到 PATH）
en.LaunchNow=Start Torch Setup Assistant now
zh_CN.LaunchNow=立即启动 PyTorch 安装助手
#ifndef ZhMessages
; Inno Setup's own custom messages that [Tasks] uses (Default.isl has them in English only)
zh_CN.AdditionalIcons=附加快捷方式：
zh_CN.CreateDesktopIcon=创建桌面快捷方式(&D)
#endif

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"
Name: "addtopath"; Description: "{cm:AddToPath}"; Flags: unchecked

[Files]
; the two executables on their own (signed when signing is on), then everything else
Source: "{#DistDir}\{#AppExe}"; DestDir: "{app}"; Flags: ignoreversion {#SignFlag}
Source: "{#DistDir}\{#CliExe}"; DestDir: "{app}"; Flags: ignoreversion {#SignFlag}
Source: "{#DistDir}\*"; Excludes: "\{#AppExe},\{#CliExe}"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs
#ifdef BundleDir
; wheels are zip files already: stored as they are (compressing them again gains little and takes long)
Source: "{#BundleDir}\*"; DestDir: "{app}\torch-bundle"; Flags: ignoreversion recursesubdirs createallsubdirs nocompression
#endif

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchNow}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
Type: filesandordirs; Name: "{app}\_internal"

[Code]
{ The PATH entry for the console executable (task addtopath): added to the user's PATH (all users':
  the machine's, in an administrator install), and at uninstall removed again only when this setup
  added it: the folder we added is recorded under OwnKey, and only that one entry leaves PATH;
  every other entry, and a PATH the user had before, stay as they were. }
const
  UserEnvKey = 'Environment';
  MachineEnvKey = 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment';
  OwnKey = 'Software\Torch Setup Assistant';
  OwnPathValue = 'PathEntryAdded';

function EnvRoot: Integer;
begin
  if IsAdminInstallMode then
    Result := HKEY_LOCAL_MACHINE
  else
    Result := HKEY_CURRENT_USER;
end;

function EnvKey: String;
begin
  if IsAdminInstallMode then
    Result := MachineEnvKey
  else
    Result := UserEnvKey;
end;

{ Windows compares folders in PATH without case and with or without a trailing backslash. }
function WithoutTrailingBackslash(S: String): String;
begin
  Result := Trim(S);
  if (Length(Result) > 3) and (Copy(Result, Length(Result), 1) = '\') then
    Result := Copy(Result, 1, Length(Result) - 1);
end;

function SameFolder(A, B: String): Boolean;
begin
  Result := CompareText(WithoutTrailingBackslash(A), WithoutTrailingBackslash(B)) = 0;
end;

{ Paths without every entry that is Dir; the other entries and their order unchanged. }
function PathWithout(Paths, Dir: String): String;
var
  Rest, Part: String;
  P: Integer;
  First: Boolean;
begin
  Result := '';
  First := True;
  Rest := Paths;
  while True do
  begin
    P := Pos(';', Rest);
    if P = 0 then
      Part := Rest
    else
      Part := Copy(Rest, 1, P - 1);
    if not SameFolder(Part, Dir) then
    begin
      if First then
        Result := Part
      else
        Result := Result + ';' + Part;
      First := False;
    end;
    if P = 0 then
      break;
    Rest := Copy(Rest, P + 1, Length(Rest));
  end;
end;

function PathHas(Paths, Dir: String): Boolean;
begin
  Result := PathWithout(Paths, Dir) <> Paths;
end;

procedure AddPathEntry;
var
  Paths, Dir: String;
begin
  Dir := ExpandConstant('{app}');
  if not RegQueryStringValue(EnvRoot, EnvKey, 'Path', Paths) then
    Paths := '';
  { already there: the user's own entry, or an earlier install's (recorded then) }
  if PathHas(Paths, Dir) then
    exit;
  if Paths = '' then
    Paths := Dir
  else if Copy(Paths, Length(Paths), 1) = ';' then
    Paths := Paths + Dir
  else
    Paths := Paths + ';' + Dir;
  if RegWriteExpandStringValue(EnvRoot, EnvKey, 'Path', Paths) then
    RegWriteStringValue(EnvRoot, OwnKey, OwnPathValue, Dir);
end;

procedure RemovePathEntry;
var
  Paths, Dir, Rest: String;
begin
  if not RegQueryStringValue(EnvRoot, OwnKey, OwnPathValue, Dir) then
    exit; { this setup added no PATH entry: PATH is not ours to touch }
  if RegQueryStringValue(EnvRoot, EnvKey, 'Path', Paths) then
  begin
    Rest := PathWithout(Paths, Dir);
    if Rest <> Paths then
    begin
      if Rest = '' then
        RegDeleteValue(EnvRoot, EnvKey, 'Path')
      else
        RegWriteExpandStringValue(EnvRoot, EnvKey, 'Path', Rest);
    end;
  end;
  RegDeleteValue(EnvRoot, OwnKey, OwnPathValue);
  RegDeleteKeyIfEmpty(EnvRoot, OwnKey);
end;

procedure CurStepChanged(CurStep: TSetupStep);
begin
  if (CurStep = ssPostInstall) and WizardIsTaskSelected('addtopath') then
    AddPathEntry;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usUninstall then
    RemovePathEntry;
end;
